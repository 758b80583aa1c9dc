// Metering and tiering analyses: how much fuel a statement costs per pass, which loops have a
// trip count known on entry (charged once up front instead of per iteration), and whether a
// block's loop nests will run long enough to be compiled by V8's optimizing tier first.
import {
  forEachChild,
  statementsIn,
  type Expr,
  type ForNode,
  type Func,
  type Node,
  type Var,
} from "./ast.js";
import { isInteger } from "./types.js";

/** Loop fuel is settled with the shared counter after this many units. */
export const LOCAL_FUEL_BATCH = 10_000;

/** Loop iterations above which a module is compiled by V8's optimizing tier before it runs. */
export const LONG_RUNNING_ITERATIONS = 200_000;

/** Iterations of a loop whose trip count is not a constant (while, unknown bounds). */
const UNKNOWN_TRIPS = 100;

/** Predicts whether some loop nest runs long: the product of trip counts along each nest
 * (a constant bound counts as itself, anything else as UNKNOWN_TRIPS). Functions that are
 * called often need no prediction: V8 tiers them up while they run; a loop in the function
 * that is running never changes tier, so that is what must be predicted before compiling. */
export function predictLongRunning(order: Func[]): boolean {
  const trips = (n: Node): number => {
    const c = n.kind === "for" ? n.cond : undefined;
    if (c && c.kind === "binary" && (c.op === "<" || c.op === "<=")) {
      const bound = c.rhs.kind === "cast" ? c.rhs.lhs : c.rhs;
      if (bound.kind === "num" && bound.ival !== undefined) return Number(bound.ival);
    }
    return UNKNOWN_TRIPS;
  };
  const deepest = (n: Node | null): number => {
    if (!n) return 1;
    let inner = 1;
    for (const k of statementsIn(n)) inner = Math.max(inner, deepest(k));
    return n.kind === "for" || n.kind === "do" ? trips(n) * inner : inner;
  };
  return order.some((f) => deepest(f.body) > LONG_RUNNING_ITERATIONS);
}

/** How much fuel one pass over a statement costs: roughly its node count. */
export function weight(n: Node | undefined): number {
  if (!n) return 0;
  let w = 1;
  if (n.kind === "decl") {
    // An initializer's stores are not counted.
    w += weight(n.lhs) + weight(n.rhs);
  } else {
    // A loop's body is charged per iteration, by the loop.
    const body = n.kind === "for" || n.kind === "do" ? n.then : undefined;
    forEachChild(n, (k) => {
      if (k !== body) w += weight(k);
    });
  }
  return Math.min(w, 1000);
}

export interface CountedLoop {
  v: Var;
  bound: Expr;
  inclusive: boolean;
  step: number;
}

/** Recognizes `for (...; i < bound; i++)` (or <=, or i += constant) whose trip count is known on
 * entry: i is a register integer, bound is pure and built from constants and register locals,
 * and the body assigns neither and cannot leave early (no break or return). Such a loop is
 * charged once up front instead of metering every iteration. */
export function countedLoop(n: ForNode): CountedLoop | null {
  const cond = n.cond;
  const inc = n.inc;
  if (!cond || !inc || cond.kind !== "binary" || (cond.op !== "<" && cond.op !== "<=")) return null;
  let lhs = cond.lhs;
  if (lhs.kind === "cast" && isInteger(lhs.ty)) lhs = lhs.lhs;
  if (lhs.kind !== "var" || lhs.v.global || lhs.v.inMemory || !isInteger(lhs.ty)) return null;
  const v = lhs.v;
  let step = 0;
  if (inc.kind === "incdec" && inc.lhs.kind === "var" && inc.lhs.v === v && inc.delta > 0)
    step = inc.delta;
  else if (
    inc.kind === "opassign" &&
    inc.op === "+" &&
    inc.lhs.kind === "var" &&
    inc.lhs.v === v &&
    inc.rhs.kind === "num" &&
    inc.rhs.ival !== undefined &&
    inc.rhs.ival > 0n &&
    inc.rhs.ival < 1n << 30n
  )
    step = Number(inc.rhs.ival);
  if (step === 0) return null;
  const boundVars = new Set<Var>();
  const pure = (e: Node): boolean => {
    switch (e.kind) {
      case "num":
        return true;
      case "var":
        if (e.v.global || e.v.inMemory || !isInteger(e.ty)) return false;
        boundVars.add(e.v);
        return true;
      case "cast":
        return isInteger(e.ty) && pure(e.lhs);
      case "binary":
        return ["+", "-", "*", "<<", ">>", "&", "|"].includes(e.op) && pure(e.lhs) && pure(e.rhs);
      default:
        return false;
    }
  };
  if (!pure(cond.rhs) || !isInteger(cond.rhs.ty)) return null;
  boundVars.add(v);
  let ok = true;
  const scan = (e: Node | undefined, top: boolean): void => {
    if (!e || !ok) return;
    if (e.kind === "break" || e.kind === "return" || e.kind === "switch" || e.kind === "goto")
      ok = false;
    if (e.kind === "call" && (e.callee === "exit" || e.callee === "main")) ok = false;
    if (
      (e.kind === "assign" || e.kind === "opassign" || e.kind === "incdec") &&
      e.lhs.kind === "var" &&
      boundVars.has(e.lhs.v)
    )
      if (!(top && e === inc)) ok = false;
    forEachChild(e, scanChild);
  };
  const scanChild = (c: Node): void => scan(c, false);
  scan(n.then, false);
  scan(inc, true);
  if (!ok) return null;
  return { v, bound: cond.rhs, inclusive: cond.op === "<=", step };
}
