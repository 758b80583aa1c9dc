// The evaluator: a CEK-style machine with an explicit continuation stack. Tail positions push no
// frame, so tail calls run in constant space; the stack length is the recursion depth, so deep
// recursion ends in "recursion too deep", never in a JavaScript stack overflow.
import { LispError, integerTooLarge, limitError, runtimeError, typeError } from "./errors.js";
import type { LispLimits } from "./limits.js";
import {
  Op,
  UNBOUND,
  type AndNode,
  type AppNode,
  type DefineGlobalNode,
  type GlobalCell,
  type IfNode,
  type LetNode,
  type LetrecNode,
  type LocalNode,
  type Node,
  type OrNode,
  type SeqNode,
  type SetGlobalNode,
  type SetLocalNode,
} from "./nodes.js";
import { printValue } from "./printer.js";
import {
  Builtin,
  CallRequest,
  Closure,
  Env,
  NIL,
  Pair,
  UNASSIGNED,
  UNSPECIFIED,
  type BuiltinContext,
  type Value,
} from "./values.js";

// Continuation kinds: what to do with the value of the sub-form being evaluated.
const K_IF = 0;
const K_SEQ = 1;
const K_FN = 2;
const K_ARG = 3;
const K_AND = 4;
const K_OR = 5;
const K_LET = 6;
const K_LETREC = 7;
const K_SET_LOCAL = 8;
const K_SET_GLOBAL = 9;
const K_DEFINE = 10;
const K_NATIVE = 11;

// Evaluator modes.
const EVAL = 0;
const RETURN = 1;
const APPLY = 2;

// Rough per-object sizes for the memory estimate (V8 object header + fields).
const PAIR_BYTES = 32;
const CLOSURE_BYTES = 32;
const ENV_BYTES = 32;
const SLOT_BYTES = 8;
const FRAME_BYTES = 72;
/** Below this estimate the end-of-run memory figure comes from a real reachability scan. */
const EXACT_MEMORY_REPORT_BYTES = 4 * 1024 * 1024;

/** A continuation frame. Frames are reused by stack position (nothing captures them), so a
 * call costs no frame allocation in the steady state. */
class Frame {
  k = 0;
  node: Node | null = null;
  env: Env | null = null;
  i = 0;
  fn: Value = UNSPECIFIED;
  vals: Value[] | null = null;
  then: ((v: Value) => Value | CallRequest) | null = null;
}

const NO_ARGS: Value[] = [];

/** Continuation frames kept for reuse between runs. */
const RETAINED_FRAMES = 1024;

/** Machine transitions per slice of the run loop. */
const SLICE_STEPS = 4096;

function arityText(min: number, max: number): string {
  if (max < 0) return `at least ${min}`;
  return min === max ? `${min}` : `${min} to ${max}`;
}

/** The value of a constant or variable node (op <= Op.Global), evaluated without a step. */
function operand(node: Node, env: Env | null): Value {
  if (node.op === Op.Const) return node.value;
  if (node.op === Op.Global) {
    const value = node.cell.value;
    if (value === UNBOUND)
      throw at(node, runtimeError(`unbound variable '${node.cell.name.name}'`));
    return value;
  }
  const local = node as LocalNode;
  let e = env!;
  for (let d = local.depth; d > 0; d--) e = e.parent!;
  const value = e.slots[local.index];
  if (value === UNASSIGNED) {
    throw at(local, runtimeError(`variable '${local.name}' used before its definition`));
  }
  return value;
}

function at(node: { line: number; column: number }, error: LispError): LispError {
  error.line = node.line;
  error.column = node.column;
  return error;
}

/** Runs compiled nodes against a session's globals, enforcing the limits of one run. */
export class Machine implements BuiltinContext {
  steps = 0;
  /** Highest continuation-stack length seen this run. */
  peakDepth = 0;
  stdout = "";
  outputTruncated = false;

  readonly maxIntegerBits: number;
  private maxSteps: number;
  private readonly integerMax: bigint;
  /** Precomputed: negating integerMax on every check would allocate a huge BigInt each time. */
  private readonly integerMin: bigint;
  private runStart = 0;
  private liveBytes = 0;
  private allocatedSinceScan = 0;
  /** Continuation stack; only frames[0..sp) are live. */
  private frames: Frame[] = [];
  private sp = 0;
  /** Values the running builtin works on, kept visible to the memory scan. */
  private activeArgs: Value[] = NO_ARGS;

  constructor(
    private readonly limits: LispLimits,
    private readonly globals: Map<unknown, GlobalCell>,
  ) {
    this.maxSteps = limits.maxSteps;
    this.maxIntegerBits = limits.maxIntegerBits;
    this.integerMax = 1n << BigInt(limits.maxIntegerBits);
    this.integerMin = -this.integerMax;
  }

  /** Resets the per-run counters: steps, output and depth. */
  beginRun(): void {
    this.runStart = performance.now();
    this.steps = 0;
    this.peakDepth = 0;
    this.stdout = "";
    this.outputTruncated = false;
    this.sp = 0;
    // Drop frames left over from a deep run (and the values they still reference).
    if (this.frames.length > RETAINED_FRAMES) this.frames.length = RETAINED_FRAMES;
    for (const frame of this.frames) {
      frame.env = null;
      frame.fn = UNSPECIFIED;
      frame.vals = null;
      frame.then = null;
    }
    this.activeArgs = NO_ARGS;
  }

  write(text: string): void {
    if (this.outputTruncated) return;
    const room = this.limits.maxOutputBytes - this.stdout.length;
    if (text.length > room) {
      this.stdout += text.slice(0, Math.max(0, room));
      this.outputTruncated = true;
    } else {
      this.stdout += text;
    }
  }

  charge(steps: number): void {
    this.steps += steps;
    if (this.steps > this.maxSteps) throw limitError("step limit exceeded");
  }

  checkInteger(n: bigint): bigint {
    if (n >= this.integerMax || n <= this.integerMin) {
      throw integerTooLarge(this.limits.maxIntegerBits);
    }
    return n;
  }

  allocate(bytes: number): void {
    this.allocatedSinceScan += bytes;
    if (this.liveBytes + this.allocatedSinceScan <= this.limits.maxMemoryBytes) return;
    // Over budget on paper: measure what is really still reachable before giving up.
    this.liveBytes = this.measureLiveBytes();
    this.allocatedSinceScan = bytes;
    if (this.liveBytes + bytes > this.limits.maxMemoryBytes) {
      throw limitError("memory limit exceeded");
    }
  }

  /** Estimated bytes reachable from the globals and the running computation. */
  measureLiveBytes(): number {
    const seen = new Set<object>();
    const work: unknown[] = [];
    for (const cell of this.globals.values()) work.push(cell.value);
    for (let i = 0; i < this.sp; i++) {
      const f = this.frames[i];
      work.push(f.env, f.fn, f.vals);
    }
    work.push(this.activeArgs);
    let bytes = 0;
    while (work.length > 0) {
      const v = work.pop();
      if (typeof v === "string") {
        bytes += 16 + v.length;
        continue;
      }
      if (typeof v === "bigint") {
        bytes += v > 0xffffffffn || v < -0xffffffffn ? 16 + v.toString(16).length / 2 : 16;
        continue;
      }
      if (typeof v !== "object" || v === null || seen.has(v)) continue;
      seen.add(v);
      if (v instanceof Pair) {
        bytes += PAIR_BYTES;
        work.push(v.car, v.cdr);
      } else if (v instanceof Env) {
        bytes += ENV_BYTES + SLOT_BYTES * v.slots.length;
        work.push(v.parent);
        for (const s of v.slots) work.push(s);
      } else if (v instanceof Closure) {
        bytes += CLOSURE_BYTES;
        work.push(v.env);
      } else if (Array.isArray(v)) {
        bytes += 16 + SLOT_BYTES * v.length;
        for (const s of v) work.push(s);
      }
    }
    return bytes;
  }

  /** Memory in use at the end of a run: the live heap plus the stack high-water mark. A small
   * heap is measured exactly; a large one is reported as its upper bound, so a session holding
   * big data does not pay for a full scan after every region. */
  memoryBytes(): number {
    this.sp = 0;
    this.activeArgs = NO_ARGS;
    if (this.liveBytes + this.allocatedSinceScan <= EXACT_MEMORY_REPORT_BYTES) {
      this.liveBytes = this.measureLiveBytes();
      this.allocatedSinceScan = 0;
    }
    return this.liveBytes + this.allocatedSinceScan + this.peakDepth * FRAME_BYTES;
  }

  // Registers of the machine between slices.
  private mode = EVAL;
  private node: Node | null = null;
  private env: Env | null = null;
  private value: Value = UNSPECIFIED;
  private fn: Value = UNSPECIFIED;
  private args: Value[] = NO_ARGS;
  /** The call form whose procedure is being applied; builtin errors are reported there. */
  private callNode: Node | null = null;

  /** Evaluates one compiled top-level form. Errors come out as positioned LispErrors. */
  execute(root: Node): Value {
    this.mode = EVAL;
    this.node = root;
    this.env = null;
    this.callNode = root;
    // Run in slices so V8 optimises the hot loop as an ordinary function (re-optimising after
    // a deopt) rather than relying on on-stack replacement of one endless call.
    while (!this.slice(SLICE_STEPS)) {
      if (performance.now() - this.runStart > this.limits.wallClockMs) {
        throw limitError(`time limit exceeded (${this.limits.wallClockMs} ms)`);
      }
    }
    const result = this.value;
    this.value = UNSPECIFIED;
    this.fn = UNSPECIFIED;
    this.args = NO_ARGS;
    return result;
  }

  private push(k: number, at: Node, frameEnv: Env | null, i: number): Frame {
    const sp = this.sp;
    if (sp >= this.limits.maxDepth) throw limitError("recursion too deep");
    let frame = this.frames[sp];
    if (frame === undefined) {
      frame = new Frame();
      this.frames.push(frame);
    }
    frame.k = k;
    frame.node = at;
    frame.env = frameEnv;
    frame.i = i;
    frame.vals = null;
    this.sp = sp + 1;
    if (sp >= this.peakDepth) this.peakDepth = sp + 1;
    return frame;
  }

  /** Runs up to `budget` machine transitions; true when the form's value is in this.value. */
  private slice(budget: number): boolean {
    const frames = this.frames;
    let mode = this.mode;
    let node = this.node!;
    let env = this.env;
    let value = this.value;
    let fn = this.fn;
    let args = this.args;
    let callNode = this.callNode!;

    try {
      for (; budget > 0; budget--) {
        if (mode === EVAL) {
          if (++this.steps > this.maxSteps) throw limitError("step limit exceeded");
          switch (node.op) {
            case Op.Const:
              value = node.value;
              mode = RETURN;
              break;
            case Op.Local: {
              let e: Env = env!;
              for (let d = node.depth; d > 0; d--) e = e.parent!;
              value = e.slots[node.index];
              if (value === UNASSIGNED) {
                throw at(node, runtimeError(`variable '${node.name}' used before its definition`));
              }
              mode = RETURN;
              break;
            }
            case Op.Global:
              value = node.cell.value;
              if (value === UNBOUND) {
                throw at(node, runtimeError(`unbound variable '${node.cell.name.name}'`));
              }
              mode = RETURN;
              break;
            case Op.If:
              this.push(K_IF, node, env, 0);
              node = node.test;
              break;
            case Op.Seq:
              this.push(K_SEQ, node, env, 1);
              node = node.nodes[0];
              break;
            case Op.App: {
              // Variables and constants in operator or operand position are fetched inline,
              // without a round trip through the continuation stack.
              const fnNode = node.fn;
              if (fnNode.op > Op.Global) {
                this.push(K_FN, node, env, 0);
                node = fnNode;
                break;
              }
              fn = operand(fnNode, env);
              const argNodes = node.args;
              const count = argNodes.length;
              if (count === 0) {
                args = NO_ARGS;
                callNode = node;
                mode = APPLY;
                break;
              }
              const vals = new Array<Value>(count);
              let i = 0;
              while (i < count && argNodes[i].op <= Op.Global) {
                vals[i] = operand(argNodes[i], env);
                i++;
              }
              if (i === count) {
                args = vals;
                callNode = node;
                mode = APPLY;
                break;
              }
              const frame = this.push(K_ARG, node, env, i);
              frame.fn = fn;
              frame.vals = vals;
              node = argNodes[i];
              break;
            }
            case Op.Lambda:
              this.allocate(CLOSURE_BYTES);
              value = new Closure(node, env);
              mode = RETURN;
              break;
            case Op.And:
              this.push(K_AND, node, env, 1);
              node = node.nodes[0];
              break;
            case Op.Or:
              this.push(K_OR, node, env, 1);
              node = node.nodes[0];
              break;
            case Op.Let:
              if (node.inits.length === 0) {
                this.allocate(ENV_BYTES + SLOT_BYTES * node.frameSize);
                env = new Env(new Array<Value>(node.frameSize).fill(UNASSIGNED), env);
                node = node.body;
              } else {
                this.push(K_LET, node, env, 0).vals = new Array<Value>(node.frameSize);
                node = node.inits[0];
              }
              break;
            case Op.Letrec:
              this.allocate(ENV_BYTES + SLOT_BYTES * node.frameSize);
              env = new Env(new Array<Value>(node.frameSize).fill(UNASSIGNED), env);
              if (node.inits.length === 0) {
                node = node.body;
              } else {
                this.push(K_LETREC, node, env, 0);
                node = node.inits[0];
              }
              break;
            case Op.SetLocal:
              this.push(K_SET_LOCAL, node, env, 0);
              node = node.value;
              break;
            case Op.SetGlobal:
              this.push(K_SET_GLOBAL, node, env, 0);
              node = node.value;
              break;
            case Op.DefineGlobal:
              this.push(K_DEFINE, node, env, 0);
              node = node.value;
              break;
          }
        } else if (mode === RETURN) {
          if (this.sp === 0) {
            this.value = value;
            return true;
          }
          const f = frames[this.sp - 1];
          switch (f.k) {
            case K_IF: {
              this.sp--;
              const n = f.node as IfNode;
              node = value !== false ? n.then : n.otherwise;
              env = f.env;
              mode = EVAL;
              break;
            }
            case K_SEQ: {
              const nodes = (f.node as SeqNode).nodes;
              const i = f.i;
              if (i === nodes.length - 1) this.sp--;
              else f.i = i + 1;
              node = nodes[i];
              env = f.env;
              mode = EVAL;
              break;
            }
            case K_FN: {
              const n = f.node as AppNode;
              if (n.args.length === 0) {
                this.sp--;
                fn = value;
                args = NO_ARGS;
                callNode = n;
                mode = APPLY;
              } else {
                f.k = K_ARG;
                f.fn = value;
                f.vals = new Array<Value>(n.args.length);
                f.i = 0;
                node = n.args[0];
                env = f.env;
                mode = EVAL;
              }
              break;
            }
            case K_ARG: {
              const n = f.node as AppNode;
              const vals = f.vals!;
              const argNodes = n.args;
              let i = f.i;
              vals[i++] = value;
              while (i < argNodes.length && argNodes[i].op <= Op.Global) {
                vals[i] = operand(argNodes[i], f.env);
                i++;
              }
              if (i < argNodes.length) {
                f.i = i;
                node = argNodes[i];
                env = f.env;
                mode = EVAL;
              } else {
                this.sp--;
                fn = f.fn;
                args = vals;
                callNode = n;
                mode = APPLY;
              }
              break;
            }
            case K_AND:
            case K_OR: {
              const nodes = (f.node as AndNode | OrNode).nodes;
              if ((value === false) === (f.k === K_AND)) {
                this.sp--;
                break;
              }
              const i = f.i;
              if (i === nodes.length - 1) this.sp--;
              else f.i = i + 1;
              node = nodes[i];
              env = f.env;
              mode = EVAL;
              break;
            }
            case K_LET: {
              const n = f.node as LetNode;
              const vals = f.vals!;
              const i = f.i + 1;
              vals[i - 1] = value;
              if (i < n.inits.length) {
                f.i = i;
                node = n.inits[i];
                env = f.env;
              } else {
                this.sp--;
                vals.fill(UNASSIGNED, i);
                this.allocate(ENV_BYTES + SLOT_BYTES * n.frameSize);
                env = new Env(vals, f.env);
                node = n.body;
              }
              mode = EVAL;
              break;
            }
            case K_LETREC: {
              const n = f.node as LetrecNode;
              f.env!.slots[f.i] = value;
              f.i++;
              if (f.i < n.inits.length) {
                node = n.inits[f.i];
              } else {
                this.sp--;
                node = n.body;
              }
              env = f.env;
              mode = EVAL;
              break;
            }
            case K_SET_LOCAL: {
              this.sp--;
              const n = f.node as SetLocalNode;
              let e: Env = f.env!;
              for (let d = n.depth; d > 0; d--) e = e.parent!;
              e.slots[n.index] = value;
              value = n.isDefine ? n.name : UNSPECIFIED;
              break;
            }
            case K_SET_GLOBAL: {
              this.sp--;
              const n = f.node as SetGlobalNode;
              if (n.cell.value === UNBOUND) {
                throw at(n, runtimeError(`unbound variable '${n.cell.name.name}'`));
              }
              n.cell.value = value;
              value = UNSPECIFIED;
              break;
            }
            case K_DEFINE: {
              this.sp--;
              const n = f.node as DefineGlobalNode;
              n.cell.value = value;
              value = n.cell.name;
              break;
            }
            case K_NATIVE: {
              this.sp--;
              callNode = f.node!;
              this.activeArgs = f.vals ?? NO_ARGS;
              const result = f.then!(value);
              this.activeArgs = NO_ARGS;
              if (result instanceof CallRequest) {
                if (result.then !== null) {
                  const frame = this.push(K_NATIVE, callNode, null, 0);
                  frame.vals = result.holds;
                  frame.then = result.then;
                }
                fn = result.proc;
                args = result.args;
                mode = APPLY;
              } else {
                value = result;
              }
              break;
            }
          }
        } else {
          // APPLY: fn to args, in tail position (no frame is left for this call).
          if (fn instanceof Closure) {
            const lambda = fn.lambda;
            const count = args.length;
            const size = lambda.frameSize;
            let slots: Value[];
            if (!lambda.rest) {
              if (count !== lambda.nparams) {
                throw at(
                  callNode,
                  typeError(
                    `wrong number of arguments to '${fn.name}': expected ${lambda.nparams}, got ${count}`,
                  ),
                );
              }
              slots = args === NO_ARGS ? [] : args;
            } else {
              if (count < lambda.nparams) {
                throw at(
                  callNode,
                  typeError(
                    `wrong number of arguments to '${fn.name}': expected at least ${lambda.nparams}, got ${count}`,
                  ),
                );
              }
              slots = args.slice(0, lambda.nparams);
              let rest: Value = NIL;
              for (let i = count - 1; i >= lambda.nparams; i--) rest = new Pair(args[i], rest);
              this.allocate(PAIR_BYTES * (count - lambda.nparams));
              slots.push(rest);
            }
            while (slots.length < size) slots.push(UNASSIGNED);
            this.activeArgs = slots;
            this.allocate(ENV_BYTES + SLOT_BYTES * size);
            this.activeArgs = NO_ARGS;
            env = new Env(slots, fn.env);
            node = lambda.body;
            mode = EVAL;
          } else if (fn instanceof Builtin) {
            const count = args.length;
            if (count < fn.minArgs || (fn.maxArgs >= 0 && count > fn.maxArgs)) {
              throw at(
                callNode,
                typeError(
                  `wrong number of arguments to '${fn.name}': expected ${arityText(fn.minArgs, fn.maxArgs)}, got ${count}`,
                ),
              );
            }
            this.activeArgs = args;
            const result = fn.fn(args, this);
            this.activeArgs = NO_ARGS;
            if (result instanceof CallRequest) {
              if (result.then !== null) {
                const frame = this.push(K_NATIVE, callNode, null, 0);
                frame.vals = result.holds;
                frame.then = result.then;
              }
              fn = result.proc;
              args = result.args;
            } else {
              value = result;
              mode = RETURN;
            }
          } else {
            throw at(callNode, typeError(`not a procedure: ${printValue(fn, "write", 60)}`));
          }
        }
      }
    } catch (e) {
      throw this.normalize(e, callNode);
    }
    this.mode = mode;
    this.node = node;
    this.env = env;
    this.value = value;
    this.fn = fn;
    this.args = args;
    this.callNode = callNode;
    return false;
  }

  /** Gives builtin errors the position of their call and turns host failures into Lisp errors. */
  private normalize(e: unknown, callNode: Node): LispError {
    if (e instanceof LispError) {
      if (e.line === 0 && e.kind !== "limit") at(callNode, e);
      return e;
    }
    if (e instanceof RangeError) {
      // V8 refused an allocation (a string or BigInt beyond its own maximum).
      return limitError("memory limit exceeded");
    }
    const message = e instanceof Error ? e.message : String(e);
    return at(callNode, runtimeError(`internal error: ${message}`));
  }
}
