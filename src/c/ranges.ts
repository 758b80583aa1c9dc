// Range facts that a branch's condition proves about a local, used to drop signed-overflow checks
// that cannot fail: in `n < 2 ? n : fib(n - 1) + fib(n - 2)` the else branch knows n >= 2, so
// neither subtraction can overflow. Only register locals (whose address is never taken) that
// the branch never assigns qualify, and only in functions without labels (a goto could enter a
// branch without passing its condition).
import { forEachChild, type Expr, type Node, type Var } from "./ast.js";
import { isInteger, type Type } from "./types.js";

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

/** An integer constant's value, also through an integer cast that keeps it unchanged. */
export function integerConstant(e: Expr): bigint | undefined {
  if (e.kind === "num") return e.ival;
  if (e.kind !== "cast" || !isInteger(e.ty) || e.lhs.kind !== "num") return undefined;
  const c = e.lhs.ival;
  return c !== undefined && c >= minOf(e.ty) && c <= maxOf(e.ty) ? c : undefined;
}

function constantOf(e: Expr): bigint | null {
  return integerConstant(e) ?? null;
}

function minOf(t: Type): bigint {
  return t.unsigned ? 0n : -(1n << BigInt(t.size * 8 - 1));
}

/** The largest value of an integer type. */
export function maxOf(t: Type): bigint {
  return (1n << BigInt(t.size * 8 - (t.unsigned ? 0 : 1))) - 1n;
}

/** The checked `v + c` and `v - c` nodes in `branch` (the statements from `from` on, taken
 * when `cond` is `truth`) whose result the condition keeps inside v's type; empty when the
 * branch assigns v. */
export function checksProvenByGuard(
  cond: Expr,
  truth: boolean,
  branch: Node | readonly Node[],
  from = 0,
): Node[] {
  const b = boundsOf(cond, truth);
  if (!b) return NOTHING_PROVEN;
  const bits = BigInt(b.v.ty.size * 8);
  guard = b;
  guardMax = (1n << (bits - 1n)) - 1n;
  guardMin = -guardMax - 1n;
  guardAssigned = false;
  const found: Node[] = [];
  proven = found;
  if (isNodeList(branch)) for (let i = from; i < branch.length; i++) visitGuarded(branch[i]!);
  else visitGuarded(branch);
  proven = NOTHING_PROVEN;
  guard = undefined;
  return guardAssigned ? NOTHING_PROVEN : found;
}

/** What checksProvenByGuard's walk carries: module state rather than a closure per call, whose
 * optimized code V8 drops with it at every full collection (the walk runs for every `if` of
 * every compiled block). */
let guard: Bounds | undefined;
let guardMax = 0n;
let guardMin = 0n;
let guardAssigned = false;
let proven: Node[] = [];

function visitGuarded(n: Node): void {
  const b = guard!;
  if (guardAssigned) return;
  if (
    (n.kind === "assign" || n.kind === "opassign" || n.kind === "incdec") &&
    n.lhs.kind === "var" &&
    n.lhs.v === b.v
  ) {
    guardAssigned = true;
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
            ? b.high !== undefined && b.high + delta <= guardMax
            : b.low !== undefined && b.low + delta >= guardMin;
        if (safe) proven.push(n);
      }
    }
  }
  forEachChild(n, visitGuarded);
}

/** The empty answer of checksProvenByGuard: shared, never written. */
const NOTHING_PROVEN: Node[] = [];

function isNodeList(branch: Node | readonly Node[]): branch is readonly Node[] {
  return Array.isArray(branch);
}

/** Whether a statement always leaves the enclosing block (`if (n < 2) return n;`). */
export function alwaysReturns(n: Node): boolean {
  if (n.kind === "return") return true;
  return n.kind === "block" && n.body.length > 0 && alwaysReturns(n.body[n.body.length - 1]!);
}

/** What the code generator knows about register locals where it stands (counted loops'
 * variables inside their bodies): inclusive lower and upper bounds. */
export interface LocalBounds {
  low: ReadonlyMap<Var, bigint>;
  high: ReadonlyMap<Var, bigint>;
}

/** The exact range of an address expression (array indexing of a global array by locals with
 * known bounds: `a[i][k]` in loops up to constants), or null if unknown. The wasm arithmetic
 * wraps modulo 2^32, so a range inside [0, 2^32) is the address's actual range. */
export function addressRange(e: Expr, known: LocalBounds): [bigint, bigint] | null {
  switch (e.kind) {
    case "var":
      return e.v.global && e.ty.kind === "array" ? [BigInt(e.v.addr), BigInt(e.v.addr)] : null;
    case "cast":
      return e.ty.kind === "ptr" ? addressRange(e.lhs, known) : null;
    case "deref":
      // A row of an array of arrays: its address, not a load.
      return e.ty.kind === "array" ? addressRange(e.lhs, known) : null;
    case "binary": {
      if (e.op !== "+" || e.ty.kind !== "ptr") return null;
      const base = addressRange(e.lhs, known);
      const idx = base && integerRange(e.rhs, known);
      return idx ? [base![0] + idx[0], base![1] + idx[1]] : null;
    }
    default:
      return null;
  }
}

function integerRange(e: Expr, known: LocalBounds): [bigint, bigint] | null {
  switch (e.kind) {
    case "num":
      return e.ival !== undefined ? [e.ival, e.ival] : null;
    case "var": {
      if (e.v.global || e.v.inMemory) return null;
      const low = known.low.get(e.v);
      const high = known.high.get(e.v);
      return low !== undefined && high !== undefined ? [low, high] : null;
    }
    case "cast": {
      if (!isInteger(e.ty) || !isInteger(e.lhs.ty)) return null;
      const r = integerRange(e.lhs, known);
      return r && r[0] >= minOf(e.ty) && r[1] <= maxOf(e.ty) ? r : null;
    }
    case "binary": {
      if (e.op !== "*" || !isInteger(e.ty)) return null;
      const r = integerRange(e.lhs, known);
      const c = e.rhs.kind === "num" ? e.rhs.ival : undefined;
      return r && c !== undefined && c >= 0n ? [r[0] * c, r[1] * c] : null;
    }
    default:
      return null;
  }
}
