// Range facts that a branch's condition proves about a local, used to drop signed-overflow checks
// that cannot fail: in `n < 2 ? n : fib(n - 1) + fib(n - 2)` the else branch knows n >= 2, so
// neither subtraction can overflow. Only register locals (whose address is never taken) that
// the branch never assigns qualify, and only in functions without labels (a goto could enter a
// branch without passing its condition).
import { forEachChild, type Expr, type Node, type Var } from "./ast.js";
import { isInteger } from "./types.js";

interface Bounds {
  v: Var;
  low?: bigint;
  high?: bigint;
}

/** What `cond` being `truth` proves: `v < K`, `v <= K`, `v > K` or `v >= K` for a signed
 * register local v and an integer constant K; null for anything else. */
function boundsOf(cond: Expr, truth: boolean): Bounds | null {
  if (cond.kind !== "binary") return null;
  const { lhs, rhs } = cond;
  if (lhs.kind !== "var" || lhs.v.global || lhs.v.inMemory) return null;
  if (!isInteger(lhs.ty) || lhs.ty.unsigned || lhs.ty.size < 4) return null;
  const k = constantOf(rhs);
  if (k === null) return null;
  // Normalize to v < K' (upper bound K'-1) or v >= K' (lower bound K') for the branch taken.
  let op: string = cond.op;
  if (!truth) op = ({ "<": ">=", "<=": ">", ">": "<=", ">=": "<" } as Record<string, string>)[op]!;
  switch (op) {
    case "<":
      return { v: lhs.v, high: k - 1n };
    case "<=":
      return { v: lhs.v, high: k };
    case ">":
      return { v: lhs.v, low: k + 1n };
    case ">=":
      return { v: lhs.v, low: k };
    default:
      return null;
  }
}

function constantOf(e: Expr): bigint | null {
  const inner = e.kind === "cast" && isInteger(e.ty) ? e.lhs : e;
  return inner.kind === "num" && inner.ival !== undefined ? inner.ival : null;
}

/** The checked `v + c` and `v - c` nodes in `branch` (taken when `cond` is `truth`) whose
 * result the condition keeps inside v's type; empty when the branch assigns v. */
export function checksProvenByGuard(cond: Expr, truth: boolean, branch: readonly Node[]): Node[] {
  const b = boundsOf(cond, truth);
  if (!b) return [];
  const bits = BigInt(b.v.ty.size * 8);
  const max = (1n << (bits - 1n)) - 1n;
  const min = -max - 1n;
  const found: Node[] = [];
  let assigned = false;
  const visit = (n: Node): void => {
    if (assigned) return;
    if (
      (n.kind === "assign" || n.kind === "opassign" || n.kind === "incdec") &&
      n.lhs.kind === "var" &&
      n.lhs.v === b.v
    ) {
      assigned = true;
      return;
    }
    if (n.kind === "binary" && (n.op === "+" || n.op === "-") && n.checked) {
      const t = n.opTy;
      if (n.lhs.kind === "var" && n.lhs.v === b.v && isInteger(t) && t.size === b.v.ty.size) {
        const c = constantOf(n.rhs);
        if (c !== null) {
          const delta = n.op === "+" ? c : -c;
          const safe =
            delta >= 0n
              ? b.high !== undefined && b.high + delta <= max
              : b.low !== undefined && b.low + delta >= min;
          if (safe) found.push(n);
        }
      }
    }
    forEachChild(n, visit);
  };
  for (const n of branch) visit(n);
  return assigned ? [] : found;
}

/** Whether a statement always leaves the enclosing block (`if (n < 2) return n;`). */
export function alwaysReturns(n: Node): boolean {
  if (n.kind === "return") return true;
  return n.kind === "block" && n.body.length > 0 && alwaysReturns(n.body[n.body.length - 1]!);
}
