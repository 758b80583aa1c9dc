// A recursive function's base case, peeled into its own call sites: in `int fib(int n) {
// return n < 2 ? n : fib(n - 1) + fib(n - 2); }` each call of fib from fib first tests
// `n - 1 < 2` on its argument and, when it holds, takes the value `n - 1` without a call (still
// paying the call's unit of fuel). Half of fib's calls are such leaves; a leaf nests no frame.
// Only a base case that is pure (constants, parameters and arithmetic) moves: evaluating it at
// the call site on the arguments gives the value, the traps and their positions the call would.
import type { Expr, Func, Stmt } from "./ast.js";

/** `if (cond) return value;` first in the body, or the whole body `return cond ? value : …;`. */
export interface BaseCase {
  cond: Expr;
  value: Expr;
}

/** The base case of `f` when it has one that can move to its call sites, else null. */
export function peelableBaseCase(f: Func): BaseCase | null {
  const ret = f.ty.ret!;
  if (f.ty.variadic || f.labels?.size || !isScalar(ret.kind)) return null;
  if (f.params.some((p) => p.inMemory || !isScalar(p.ty.kind))) return null;
  // No frame either: a leaf's call would have reserved (and might have run out of) stack.
  if (f.locals.some((v) => v.inMemory) || f.hasVla) return null;
  const first: Stmt | undefined = f.body?.body[0];
  let found: BaseCase | null = null;
  if (first?.kind === "if" && !first.els) {
    const then = onlyReturn(first.then);
    if (then?.lhs) found = { cond: first.cond, value: then.lhs };
  } else if (first?.kind === "return" && first.lhs?.kind === "cond") {
    found = { cond: first.lhs.cond, value: first.lhs.then };
  }
  if (!found || found.value.ty.kind !== ret.kind || !!found.value.ty.unsigned !== !!ret.unsigned)
    return null;
  const params = new Set(f.params.map((p) => p.id));
  return pure(found.cond, params) && pure(found.value, params) ? found : null;
}

function isScalar(kind: string): boolean {
  return kind !== "struct" && kind !== "union" && kind !== "array" && kind !== "void";
}

function onlyReturn(s: Stmt): (Stmt & { kind: "return" }) | null {
  if (s.kind === "return") return s;
  if (s.kind === "block" && s.body.length === 1) return onlyReturn(s.body[0]!);
  return null;
}

/** Constants, the function's parameters, and arithmetic or comparisons of them. */
function pure(e: Expr, params: Set<number>): boolean {
  switch (e.kind) {
    case "num":
      return true;
    case "var":
      return params.has(e.v.id) && !e.v.global;
    case "binary":
    case "logand":
    case "logor":
      return pure(e.lhs, params) && pure(e.rhs, params);
    case "neg":
    case "not":
    case "bitnot":
    case "cast":
      return pure(e.lhs, params);
    case "cond":
      return pure(e.cond, params) && pure(e.then, params) && pure(e.els, params);
    default:
      return false;
  }
}
