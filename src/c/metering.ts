// Metering and tiering analyses: how much fuel a statement costs per pass, which loops have a
// trip count known on entry (charged once up front instead of per iteration), and whether a
// block's loop nests will run long enough to be compiled by V8's optimizing tier first.
import {
  forEachChild,
  type DoNode,
  type Expr,
  type ForNode,
  type Func,
  type Node,
  type Var,
} from "./ast.js";
import { integerConstant, maxOf } from "./ranges.js";
import { keepShape } from "./shapes.js";
import { isInteger, type Type } from "./types.js";

/** Loop fuel is settled with the shared counter after this many units. */
export const LOCAL_FUEL_BATCH = 10_000;

/** Loop iterations above which a module is compiled by V8's optimizing tier before it runs. */
export const LONG_RUNNING_ITERATIONS = 200_000;

/** Iterations of a loop whose trip count is not a constant (while, unknown bounds). */
const UNKNOWN_TRIPS = 100;

/** A loop's trip count for predicting a long run (see LoopNest): a constant bound counts as
 * itself, anything else as UNKNOWN_TRIPS. */
function predictedTrips(n: ForNode | DoNode): number {
  const c = n.kind === "for" ? n.cond : undefined;
  if (c && c.kind === "binary" && (c.op === "<" || c.op === "<=")) {
    const bound = c.rhs.kind === "cast" ? c.rhs.lhs : c.rhs;
    if (bound.kind === "num" && bound.ival !== undefined) return Number(bound.ival);
  }
  return UNKNOWN_TRIPS;
}

/** Predicts whether some loop nest runs long: the product of trip counts along each nest. The
 * code generator enters and leaves each loop as it emits it, so the prediction costs no walk
 * of its own. Functions that are called often need no prediction: V8 tiers them up while they
 * run; a loop in the function that is running never changes tier, so that is what must be
 * predicted before compiling. */
export class LoopNest {
  private product = 1;
  private deepest = 1;
  /** Enters a loop; returns the product outside it, for leave(). */
  enter(n: ForNode | DoNode): number {
    const outer = this.product;
    this.product = outer * predictedTrips(n);
    if (this.product > this.deepest) this.deepest = this.product;
    return outer;
  }
  leave(outer: number): void {
    this.product = outer;
  }
  /** Whether a nest seen so far is predicted to run long. */
  get runsLong(): boolean {
    return this.deepest > LONG_RUNNING_ITERATIONS;
  }
}

keepShape(new LoopNest());

/** The running sum of the node weight() is summing, and the child it leaves out (a loop's
 * body): module state rather than a closure per node, which was most of what code generation
 * allocated (weight runs over every loop's body, for every compiled block). */
let weightSum = 0;
let weightSkip: Node | undefined;
const addChildWeight = (k: Node): void => {
  if (k !== weightSkip) weightSum += weight(k);
};

/** How much fuel one pass over a statement costs: roughly its node count. */
export function weight(n: Node | undefined): number {
  if (!n) return 0;
  // An initializer's stores are not counted.
  if (n.kind === "decl") return Math.min(1 + weight(n.lhs) + weight(n.rhs), 1000);
  const outerSum = weightSum;
  const outerSkip = weightSkip;
  weightSum = 1;
  // A loop's body is charged per iteration, by the loop.
  weightSkip = n.kind === "for" || n.kind === "do" ? n.then : undefined;
  forEachChild(n, addChildWeight);
  const w = weightSum;
  weightSum = outerSum;
  weightSkip = outerSkip;
  return Math.min(w, 1000);
}

export interface CountedLoop {
  v: Var;
  bound: Expr;
  inclusive: boolean;
  /** The constant step, or 0 when the step is stepVar. */
  step: number;
  /** A register local the body never assigns, proven >= 1 where the loop starts. */
  stepVar?: Var;
  /** i and bound are compared as unsigned 64-bit numbers. */
  unsigned64: boolean;
}

/** Recognizes `for (...; i < bound; i++)` (or <=, or i += constant, or i += s for a local s
 * that `lowerBound` proves positive) whose trip count is known on entry: i is a register
 * integer, bound is pure and built from constants and register locals, and the body assigns
 * none of them and cannot leave early (no break or return). Such a loop is charged once up
 * front instead of metering every iteration. */
export function countedLoop(
  n: ForNode,
  lowerBound?: (v: Var) => bigint | undefined,
): CountedLoop | null {
  const cond = n.cond;
  const inc = n.inc;
  if (!cond || !inc || cond.kind !== "binary" || (cond.op !== "<" && cond.op !== "<=")) return null;
  let lhs = cond.lhs;
  // Through a cast only where it keeps i's value (the trip count is computed from i itself).
  if (lhs.kind === "cast" && isInteger(lhs.ty) && preservesValue(lhs.lhs.ty, lhs.ty)) lhs = lhs.lhs;
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
  const stepVar = step === 0 ? positiveStep(inc, v, lowerBound) : undefined;
  if (step === 0 && !stepVar) return null;
  const boundVars = new Set<Var>();
  if (stepVar) boundVars.add(stepVar);
  if (!pureBound(cond.rhs, boundVars) || !isInteger(cond.rhs.ty)) return null;
  boundVars.add(v);
  if (!bodyKeepsBound(n.then, inc, boundVars)) return null;
  const unsigned64 = !!cond.opTy.unsigned && cond.opTy.size === 8;
  return { v, bound: cond.rhs, inclusive: cond.op === "<=", step, stepVar, unsigned64 };
}

const BOUND_OPS: ReadonlySet<string> = new Set(["+", "-", "*", "<<", ">>", "&", "|"]);

/** Whether a loop bound is built from constants and register integer locals only (each is
 * added to `vars`, which the loop body must then not assign). */
function pureBound(e: Node, vars: Set<Var>): boolean {
  switch (e.kind) {
    case "num":
      return true;
    case "var":
      if (e.v.global || e.v.inMemory || !isInteger(e.ty)) return false;
      vars.add(e.v);
      return true;
    case "cast":
      return isInteger(e.ty) && pureBound(e.lhs, vars);
    case "binary":
      return BOUND_OPS.has(e.op) && pureBound(e.lhs, vars) && pureBound(e.rhs, vars);
    default:
      return false;
  }
}

/** What bodyKeepsBound's walk carries: module state rather than closures per call, whose
 * optimized code V8 drops with them at every full collection (see weight). */
let scanOk = true;
const NO_VARS: Set<Var> = new Set();
let scanVars = NO_VARS;
let scanInc: Expr | undefined;
const scanChild = (c: Node): void => scanNode(c, false);

/** Whether a counted loop's body (and its increment `inc`, which alone may step the loop
 * variable) cannot leave early and assigns none of `vars`. */
function bodyKeepsBound(body: Node, inc: Expr, vars: Set<Var>): boolean {
  scanOk = true;
  scanVars = vars;
  scanInc = inc;
  scanNode(body, false);
  scanNode(inc, true);
  scanVars = NO_VARS;
  scanInc = undefined;
  return scanOk;
}

function scanNode(e: Node | undefined, top: boolean): void {
  if (!e || !scanOk) return;
  if (e.kind === "break" || e.kind === "return" || e.kind === "switch" || e.kind === "goto")
    scanOk = false;
  if (e.kind === "call" && (e.callee === "exit" || e.callee === "main")) scanOk = false;
  if (
    (e.kind === "assign" || e.kind === "opassign" || e.kind === "incdec") &&
    e.lhs.kind === "var" &&
    scanVars.has(e.lhs.v)
  )
    if (!(top && e === scanInc)) scanOk = false;
  forEachChild(e, scanChild);
}

/** Whether converting an integer of type `from` to `to` never changes its value. */
function preservesValue(from: Type, to: Type): boolean {
  if (!isInteger(from)) return false;
  if (!!from.unsigned === !!to.unsigned) return to.size >= from.size;
  return !!from.unsigned && to.size > from.size;
}

/** The signed register local s of `i += s` (widened, never narrowed) if it is at least 1. */
function positiveStep(
  inc: Expr,
  v: Var,
  lowerBound: ((v: Var) => bigint | undefined) | undefined,
): Var | undefined {
  if (inc.kind !== "opassign" || inc.op !== "+" || inc.lhs.kind !== "var" || inc.lhs.v !== v)
    return undefined;
  const r = inc.rhs.kind === "cast" && isInteger(inc.rhs.ty) ? inc.rhs.lhs : inc.rhs;
  if (r.kind !== "var" || r.v.global || r.v.inMemory || !isSigned(r.ty)) return undefined;
  if (r.ty.size > inc.rhs.ty.size) return undefined;
  return (lowerBound?.(r.v) ?? 0n) >= 1n ? r.v : undefined;
}

function isSigned(t: Type): boolean {
  return isInteger(t) && !t.unsigned && t.size >= 4;
}

/** The largest value an expression's source type allows (what it had before a widening cast). */
function sourceMax(e: Expr): bigint {
  return maxOf(
    e.kind === "cast" && isInteger(e.lhs.ty) && e.lhs.ty.size <= e.ty.size ? e.lhs.ty : e.ty,
  );
}

/** Whether a counted loop's `i += step` can never overflow: it runs only after an iteration
 * that began with i < bound (i compared in its own type, never assigned in the body), so
 * i + step <= max(bound) + max(step), and that fits in i's type (`long j; j < n; j += i` for
 * int n and i). A constant step of 1 with `<` always fits. */
export function countedIncrementInRange(n: ForNode, c: CountedLoop): boolean {
  const cond = n.cond;
  if (cond?.kind !== "binary" || cond.lhs.kind !== "var" || cond.lhs.ty !== c.v.ty) return false;
  if (c.step === 1 && !c.inclusive) return true;
  if (!isSigned(c.v.ty) || n.inc?.kind !== "opassign") return false;
  const stepMax = c.stepVar ? sourceMax(n.inc.rhs) : BigInt(c.step);
  return sourceMax(c.bound) + stepMax <= maxOf(c.v.ty);
}

/** In a counted loop's body, i >= its start when i starts at a constant and counts up without
 * wrapping (checked arithmetic, or an increment that cannot overflow): the lower bound that
 * lets an inner loop's `j += i` be a counted step. */
export function countedStart(n: ForNode, c: CountedLoop): bigint | undefined {
  if (!isSigned(c.v.ty)) return undefined;
  let init: Node | undefined = n.init;
  if (init?.kind === "block" && init.body.length === 1) init = init.body[0];
  if (init?.kind === "decl" && init.v === c.v && init.initializer?.expr)
    return integerConstant(init.initializer.expr);
  if (init?.kind === "exprstmt" && init.lhs.kind === "assign" && init.lhs.lhs.kind === "var")
    return init.lhs.lhs.v === c.v ? integerConstant(init.lhs.rhs) : undefined;
  return undefined;
}
