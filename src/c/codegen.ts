// Stage 5: turns typed functions into one WebAssembly module. Scalars whose address is never
// taken live in wasm locals; arrays, structs and address-taken locals live in a shadow-stack
// frame in linear memory. Loops and calls are metered; division and recursion are checked.
import { LARGE_LOCAL_BYTES, type Func, type Initializer, type Node, type Var } from "./ast.js";
import { CompileError, typeError } from "./errors.js";
import { BRIDGE_TABLE, bridgeLayout, hostSig, type BridgeLayout } from "./host-bridge.js";
import { INLINE_FUNCTIONS } from "./library.js";
import {
  T,
  isAggregate,
  isFloat,
  isInteger,
  typeName,
  valType,
  varargSlots,
  type Type,
} from "./types.js";
import {
  FuncBuilder,
  Op,
  PrefixOp,
  TypeTable,
  encodeModule,
  releaseWriter,
  type FuncSig,
  type ImportedFunc,
  type ValType,
} from "./wasm.js";

/** Trap codes passed to the host's `trap` import. */
export const TrapCode = {
  divisionByZero: 1,
  stackOverflow: 2,
  assertion: 3,
  exit: 4,
  callDepth: 5,
  badFunctionPointer: 6,
  nullPointer: 7,
  /** Signed overflow: OVERFLOW_BASE + operator index * 2 + (1 for 64-bit); see overflowTrap. */
  overflow: 16,
} as const;

/** The operators whose signed overflow traps, in trap-code order. */
export const OVERFLOW_OPS = ["+", "-", "*", "unary -"] as const;

/** The trap code for overflow of operator `op` on a 32- or 64-bit signed integer. */
function overflowTrap(op: (typeof OVERFLOW_OPS)[number], is64: boolean): number {
  return TrapCode.overflow + OVERFLOW_OPS.indexOf(op) * 2 + (is64 ? 1 : 0);
}

/** Loop fuel is settled with the shared counter after this many units. */
const LOCAL_FUEL_BATCH = 10_000;

/** Module globals, in index order; exported under these names. */
export const GLOBAL_SP = 0;
export const GLOBAL_FUEL = 1;
export const GLOBAL_DEPTH = 2;

export interface CodegenOptions {
  /** Every function visible (user, C library, prototypes). */
  funcs: ReadonlyMap<string, Func>;
  /** Functions to export by name (the entry, `main`, or a function called from the host). */
  roots: string[];
  /** Host-implemented library functions and their C types. */
  hostFunctions: Map<string, Type>;
  /** Registered intrinsics and their C types. */
  intrinsics: Map<string, Type>;
  /** Session-stable table slot for a function used as a value. */
  slotOf(name: string): number;
  /** Every function that holds a table slot so far (all must be present in the table). */
  slotted(): Map<string, number>;
  memoryPages: { min: number; max: number };
  /** Lowest legal shadow-stack address (below it: stack overflow). */
  stackLow: number;
  maxCallDepth: number;
  /** Signed integer arithmetic wraps (gcc's -fwrapv) instead of trapping on overflow. */
  wrapv?: boolean;
  /** Dereferencing an address below this traps as a null pointer dereference (0: no check). */
  nullGuard?: number;
}

export interface CompiledModule {
  bytes: Uint8Array;
  /** Per defined function: module offset of its code and its (offset, line, col) triples. */
  positions: { codeStart: number; entries: number[]; traps: number[] }[];
  /** Imported functions, in import order: the intrinsics the block calls. */
  imports: { kind: "intrinsic"; name: string; sig: FuncSig }[];
  /** Host library functions the block calls (through the host bridge's table). */
  hostCalls: string[];
  /** Exported user functions and their C types. */
  exports: Map<string, Type>;
  /** A loop nest is predicted to run long (see predictLongRunning): worth optimizing up front. */
  longRunning: boolean;
}

/** Loop iterations above which a module is compiled by V8's optimizing tier before it runs. */
export const LONG_RUNNING_ITERATIONS = 200_000;

/** Iterations of a loop whose trip count is not a constant (while, unknown bounds). */
const UNKNOWN_TRIPS = 100;

/** Predicts whether some loop nest runs long: the product of trip counts along each nest
 * (a constant bound counts as itself, anything else as UNKNOWN_TRIPS). Functions that are
 * called often need no prediction: V8 tiers them up while they run; a loop in the function
 * that is running never changes tier, so that is what must be predicted before compiling. */
function predictLongRunning(order: Func[]): boolean {
  const trips = (n: Node): number => {
    const c = n.cond;
    if (n.kind === "for" && c && c.kind === "binary" && (c.op === "<" || c.op === "<=")) {
      const bound = c.rhs!.kind === "cast" ? c.rhs!.lhs! : c.rhs!;
      if (bound.kind === "num" && bound.ival !== undefined) return Number(bound.ival);
    }
    return UNKNOWN_TRIPS;
  };
  const deepest = (n: Node | undefined): number => {
    if (!n) return 1;
    let inner = 1;
    for (const k of [n.then, n.els, ...(n.body ?? [])]) inner = Math.max(inner, deepest(k));
    return n.kind === "for" || n.kind === "do" ? trips(n) * inner : inner;
  };
  return order.some((f) => deepest(f.body!) > LONG_RUNNING_ITERATIONS);
}

/** User functions: scalars by value, structs by address; a struct result is written to a
 * caller-provided buffer passed as a hidden first parameter, whose address is returned. */
function userSig(f: Type): FuncSig {
  const params = f.params!.map(valType);
  if (isAggregate(f.ret!)) params.unshift("i32");
  if (f.variadic) params.push("i32");
  return { params, results: f.ret!.kind === "void" ? [] : [valType(f.ret!)] };
}

/** The largest number of variadic arguments any call in `n` passes (each takes an 8-byte slot). */
function maxVarargs(n: Node | undefined): number {
  if (!n) return 0;
  let m = 0;
  if (n.kind === "call" && n.fnTy?.variadic)
    m = n.args!.slice(n.fnTy.params!.length).reduce((k, a) => k + varargSlots(a.ty!), 0);
  m = Math.max(m, maxVarargs(n.lhs), maxVarargs(n.rhs), maxVarargs(n.cond), maxVarargs(n.then));
  m = Math.max(m, maxVarargs(n.els), maxVarargs(n.init), maxVarargs(n.inc));
  for (const c of n.body ?? []) m = Math.max(m, maxVarargs(c));
  for (const c of n.args ?? []) m = Math.max(m, maxVarargs(c));
  if (n.initializer) m = Math.max(m, maxVarargsInit(n.initializer));
  return m;
}
function maxVarargsInit(i: Initializer): number {
  let m = maxVarargs(i.expr);
  for (const it of i.items ?? []) m = Math.max(m, maxVarargsInit(it.init));
  return m;
}

/** Compiles the functions reachable from `roots` into a module. */
export function generateModule(opts: CodegenOptions): CompiledModule {
  const types = new TypeTable();
  const imports: CompiledModule["imports"] = [];
  const importIndex = new Map<string, number>();
  const bridge = bridgeLayout(opts.hostFunctions);
  const hostCalls: string[] = [];
  const order: Func[] = [];
  const funcIndex = new Map<string, number>();

  // Reachability: user/C-library functions become module functions, the rest imports.
  const queue: string[] = [...opts.roots];
  for (const [name] of opts.slotted()) if (opts.funcs.get(name)?.body) queue.push(name);
  const seen = new Set<string>();
  const visit = (name: string, at: { line: number; col: number } | null): void => {
    if (seen.has(name)) return;
    const f = opts.funcs.get(name);
    if (f && f.body) {
      seen.add(name);
      order.push(f);
      for (const [ref, pos] of f.refs) visit(ref, pos);
      return;
    }
    if (opts.hostFunctions.has(name)) {
      seen.add(name);
      if (!INLINE_FUNCTIONS.has(name)) hostCalls.push(name);
      return;
    }
    if (opts.intrinsics.has(name)) {
      seen.add(name);
      importIndex.set(name, imports.length);
      imports.push({ kind: "intrinsic", name, sig: hostSig(opts.intrinsics.get(name)!) });
      return;
    }
    const line = at?.line ?? 0;
    const col = at?.col ?? 0;
    if (f)
      throw new CompileError("type", `function '${name}' is declared but never defined`, line, col);
    throw new CompileError("type", `unknown function '${name}'`, line, col);
  };
  for (const r of queue) visit(r, null);
  order.forEach((f, i) => funcIndex.set(f.name, imports.length + i));

  const ctx: ModuleContext = {
    opts,
    types,
    importIndex,
    funcIndex,
    imports,
    bridge,
    recursive: findRecursive(order, opts),
  };
  const functions = order.map((f) => ({
    sig: userSig(f.ty),
    body: new FunctionGenerator(ctx, f).generate(),
    exportName: opts.roots.includes(f.name) ? f.name : undefined,
  }));

  const slots = opts.slotted();
  let tableSize = 0;
  for (const [, s] of slots) tableSize = Math.max(tableSize, s + 1);
  const table: (number | null)[] = new Array(tableSize).fill(null);
  for (const [name, s] of slots) {
    const idx = funcIndex.get(name);
    if (idx !== undefined) table[s] = idx;
  }
  const encoded = encodeModule(
    {
      imports: imports.map(
        (i) => ({ module: i.kind, name: i.name, sig: i.sig }) satisfies ImportedFunc,
      ),
      importedTable: { ...BRIDGE_TABLE, size: bridge.entries.length },
      memory: {
        module: "env",
        name: "memory",
        minPages: opts.memoryPages.min,
        maxPages: opts.memoryPages.max,
      },
      functions,
      globals: [
        { type: "i32", mutable: true, init: 0, exportName: "sp" },
        { type: "i32", mutable: true, init: 0, exportName: "fuel" },
        { type: "i32", mutable: true, init: 0, exportName: "depth" },
      ],
      table,
      exportTable: "table",
    },
    types,
  );
  for (const f of functions) f.body.release();
  const exports = new Map<string, Type>();
  for (const r of opts.roots) exports.set(r, opts.funcs.get(r)!.ty);
  const positions = functions.map((f, i) => ({
    codeStart: encoded.codeStarts[i]!,
    entries: f.body.positions,
    traps: f.body.trapCodes,
  }));
  return {
    bytes: encoded.bytes,
    positions,
    imports,
    hostCalls,
    exports,
    // Recursion goes optimized too: Liftoff frames are several times larger, and a deep
    // recursion would exhaust the host's stack long before maxCallDepth.
    longRunning: ctx.recursive.size > 0 || predictLongRunning(order),
  };
}

/** Functions that may be re-entered before they return: on a direct call cycle, or reachable
 * through a function pointer, or making indirect calls themselves. */
function findRecursive(order: Func[], opts: CodegenOptions): Set<string> {
  const byName = new Map(order.map((f) => [f.name, f]));
  const slotted = opts.slotted();
  const out = new Set<string>();
  for (const f of order) {
    if (f.indirect || slotted.has(f.name)) {
      out.add(f.name);
      continue;
    }
    const seen = new Set<string>();
    const stack = [...f.refs.keys()];
    while (stack.length > 0) {
      const n = stack.pop()!;
      if (n === f.name) {
        out.add(f.name);
        break;
      }
      if (seen.has(n)) continue;
      seen.add(n);
      const g = byName.get(n);
      if (g) {
        if (g.indirect) {
          out.add(f.name);
          break;
        }
        stack.push(...g.refs.keys());
      }
    }
  }
  return out;
}

interface ModuleContext {
  recursive: Set<string>;
  opts: CodegenOptions;
  types: TypeTable;
  importIndex: Map<string, number>;
  funcIndex: Map<string, number>;
  imports: CompiledModule["imports"];
  bridge: BridgeLayout;
}

/** Table 0 is the host bridge's (imported); table 1 holds the block's function pointers. */
const HOST_TABLE = 0;
const FUNCTION_TABLE = 1;

/** Wasm block labels: loop/switch targets, plain blocks, and `dispatch:n`, the loop at the top
 * of a C block with labels that every goto into that block branches back to. */
type Label = "break" | "continue" | "other" | `dispatch:${number}`;

/** A C block that contains labels (at any depth): its dispatch loop and those labels. */
interface Dispatch {
  id: number;
  labels: Set<number>;
}

/** The labels (numbered per function) that each statement contains, at any depth. */
function labelsWithin(
  body: Node,
  number: Map<string, number>,
  caseNumber: Map<Node, number>,
): Map<Node, Set<number>> {
  const within = new Map<Node, Set<number>>();
  /** Statement expressions are blocks of their own: a goto from outside cannot enter them. */
  const expressions = (e: Node | undefined): void => {
    if (!e) return;
    if (e.kind === "stmtexpr") {
      walk({ ...e, kind: "block" }, e);
      return;
    }
    for (const k of [e.lhs, e.rhs, e.cond, e.then, e.els, ...(e.args ?? [])]) expressions(k);
  };
  const walk = (n: Node | undefined, key: Node | undefined = n): Set<number> => {
    const found = new Set<number>();
    if (!n) return found;
    if (n.kind === "exprstmt" || n.kind === "return") expressions(n.lhs);
    if (n.kind === "label") found.add(number.get(n.label!)!);
    if (n.kind === "case" && caseNumber.has(n)) found.add(caseNumber.get(n)!);
    const kids: (Node | undefined)[] =
      n.kind === "block" ? n.body! : [n.then, n.els, ...(n.kind === "for" ? [n.init] : [])];
    for (const k of kids) for (const l of walk(k)) found.add(l);
    if (found.size > 0) within.set(key!, found);
    return found;
  };
  walk(body);
  return within;
}

/** How much fuel one pass over a statement costs: roughly its node count. */
function weight(n: Node | undefined): number {
  if (!n) return 0;
  let w = 1;
  w += weight(n.lhs) + weight(n.rhs) + weight(n.cond) + weight(n.init) + weight(n.inc);
  if (n.kind !== "for" && n.kind !== "do") w += weight(n.then) + weight(n.els);
  if (n.body) for (const b of n.body) w += weight(b);
  if (n.args) for (const a of n.args) w += weight(a);
  return Math.min(w, 1000);
}

interface CountedLoop {
  v: Var;
  bound: Node;
  inclusive: boolean;
  step: number;
}

/** Recognizes `for (...; i < bound; i++)` (or <=, or i += constant) whose trip count is known on
 * entry: i is a register integer, bound is pure and built from constants and register locals,
 * and the body assigns neither and cannot leave early (no break or return). Such a loop is
 * charged once up front instead of metering every iteration. */
function countedLoop(n: Node): CountedLoop | null {
  const cond = n.cond;
  const inc = n.inc;
  if (!cond || !inc || cond.kind !== "binary" || (cond.op !== "<" && cond.op !== "<=")) return null;
  let lhs = cond.lhs!;
  if (lhs.kind === "cast" && isInteger(lhs.ty!)) lhs = lhs.lhs!;
  if (lhs.kind !== "var" || lhs.v!.global || lhs.v!.inMemory || !isInteger(lhs.ty!)) return null;
  const v = lhs.v!;
  let step = 0;
  if (inc.kind === "incdec" && inc.lhs!.kind === "var" && inc.lhs!.v === v && inc.delta! > 0)
    step = inc.delta!;
  else if (
    inc.kind === "opassign" &&
    inc.op === "+" &&
    inc.lhs!.kind === "var" &&
    inc.lhs!.v === v &&
    inc.rhs!.kind === "num" &&
    inc.rhs!.ival !== undefined &&
    inc.rhs!.ival > 0n &&
    inc.rhs!.ival < 1n << 30n
  )
    step = Number(inc.rhs!.ival);
  if (step === 0) return null;
  const boundVars = new Set<Var>();
  const pure = (e: Node): boolean => {
    switch (e.kind) {
      case "num":
        return true;
      case "var":
        if (e.v!.global || e.v!.inMemory || !isInteger(e.ty!)) return false;
        boundVars.add(e.v!);
        return true;
      case "cast":
        return isInteger(e.ty!) && pure(e.lhs!);
      case "binary":
        return (
          ["+", "-", "*", "<<", ">>", "&", "|"].includes(e.op!) && pure(e.lhs!) && pure(e.rhs!)
        );
      default:
        return false;
    }
  };
  if (!pure(cond.rhs!) || !isInteger(cond.rhs!.ty!)) return null;
  boundVars.add(v);
  let ok = true;
  const scan = (e: Node | undefined, top: boolean): void => {
    if (!e || !ok) return;
    if (e.kind === "break" || e.kind === "return" || e.kind === "switch" || e.kind === "goto")
      ok = false;
    if (e.kind === "call" && (e.callee === "exit" || e.callee === "main")) ok = false;
    if (
      (e.kind === "assign" || e.kind === "opassign" || e.kind === "incdec") &&
      e.lhs!.kind === "var" &&
      boundVars.has(e.lhs!.v!)
    )
      if (!(top && e === inc)) ok = false;
    scan(e.lhs, false);
    scan(e.rhs, false);
    scan(e.cond, false);
    scan(e.then, false);
    scan(e.els, false);
    scan(e.init, false);
    scan(e.inc, false);
    for (const c of e.body ?? []) scan(c, false);
    for (const c of e.args ?? []) scan(c, false);
    if (e.initializer) scanInit(e.initializer);
  };
  const scanInit = (i: Initializer): void => {
    scan(i.expr, false);
    for (const it of i.items ?? []) scanInit(it.init);
  };
  scan(n.then, false);
  scan(inc, true);
  if (!ok) return null;
  return { v, bound: cond.rhs!, inclusive: cond.op === "<=", step };
}

class FunctionGenerator {
  private fb: FuncBuilder;
  private readonly localOf = new Map<number, number>();
  private readonly frameOffset = new Map<number, number>();
  /** Big local arrays: the wasm local holding their heap address. */
  private readonly heapOf = new Map<number, number>();
  /** Variable-length arrays (their address local is in heapOf, but they live on the stack). */
  private readonly vlas = new Set<number>();
  private spSave = -1;
  private frameSize = 0;
  private varargBytes = 0;
  private varargOffset = 0;
  /** Frame bytes for struct results of calls made by this function. */
  private tempBytes = 0;
  /** Wasm parameter index of the first C parameter (1 when a struct-result buffer comes first). */
  private readonly paramBase: number;
  private fp = -1;
  private fuelLocal = -1;
  private ret = -1;
  private labels: Label[] = [];
  private readonly dispatches: Dispatch[] = [];
  private dispatchCount = 0;
  /** Labels of this function, numbered from 1; the statements holding them; and the local
   * holding the label a goto is on its way to (0 while no goto is in flight). */
  private readonly labelNumber = new Map<string, number>();
  private labelsIn = new Map<Node, Set<number>>();
  private readonly caseNumber = new Map<Node, number>();
  private gotoTarget = -1;
  /** Scratch locals of the overflow checks (used only between an operation and its check). */
  private readonly scratch = new Map<string, number>();

  constructor(
    private readonly ctx: ModuleContext,
    private readonly f: Func,
  ) {
    this.paramBase = isAggregate(f.ty.ret!) ? 1 : 0;
    this.fb = new FuncBuilder(f.params.length + this.paramBase + (f.ty.variadic ? 1 : 0));
  }

  generate(): FuncBuilder {
    const f = this.f;
    const fb = this.fb;
    f.params.forEach((p, i) => {
      if (!p.inMemory) this.localOf.set(p.id, i + this.paramBase);
    });
    if (f.varargs) this.localOf.set(f.varargs.id, f.params.length + this.paramBase);
    for (const v of [...f.params, ...f.locals]) {
      if (v.ty.vlaCount) {
        this.heapOf.set(v.id, fb.addLocal("i32"));
        this.vlas.add(v.id);
      } else if (v.inMemory && !v.isParam && v.ty.size > LARGE_LOCAL_BYTES) {
        this.heapOf.set(v.id, fb.addLocal("i32"));
      } else if (v.inMemory) {
        const align = Math.max(v.ty.align, 4);
        this.frameSize = Math.ceil(this.frameSize / align) * align;
        this.frameOffset.set(v.id, this.frameSize);
        this.frameSize += Math.max(v.ty.size, 1);
      } else if (!v.isParam && v !== f.varargs) this.localOf.set(v.id, fb.addLocal(valType(v.ty)));
    }
    this.frameSize = Math.ceil(this.frameSize / 8) * 8;
    this.varargOffset = this.frameSize;
    this.varargBytes = maxVarargs(f.body!) * 8;
    this.fp = fb.addLocal("i32");
    if (f.hasVla) this.spSave = fb.addLocal("i32");
    const retTy = f.ty.ret!;
    if (retTy.kind !== "void") this.ret = fb.addLocal(valType(retTy));

    for (const name of f.labels ?? []) this.labelNumber.set(name, this.labelNumber.size + 1);
    for (const sw of f.switches ?? [])
      if (FunctionGenerator.nestedCases(sw).length > 0)
        for (const c of sw.cases!)
          this.caseNumber.set(c.node, this.labelNumber.size + this.caseNumber.size + 1);
    if (this.labelNumber.size + this.caseNumber.size > 0) {
      this.labelsIn = labelsWithin(f.body!, this.labelNumber, this.caseNumber);
      this.gotoTarget = fb.addLocal("i32");
    }
    // Body first (it decides the vararg area), then the prologue in front of it.
    this.labels.push("other");
    fb.blockOp(Op.block);
    this.stmt(f.body!);
    fb.op(Op.end);
    this.labels.pop();
    const body = fb.takeCode();
    const bodyPositions = fb.positions;
    const bodyTraps = fb.trapCodes;
    fb.positions = [];
    fb.trapCodes = [];
    fb.at(f);

    const frame = this.frameSize + this.varargBytes + this.tempBytes;
    // Only functions on a call cycle can recurse without bound; loops are metered on their own.
    const mayRecurse = this.ctx.recursive.has(f.name);
    if (mayRecurse) this.meter(1);
    // Call depth bound: a clean "stack overflow" long before the host stack is at risk.
    if (mayRecurse) {
      fb.globalGet(GLOBAL_DEPTH).i32(this.ctx.opts.maxCallDepth).op(Op.i32_ge_u).blockOp(Op.if);
      this.trap(TrapCode.callDepth, f);
      fb.op(Op.end);
      fb.globalGet(GLOBAL_DEPTH).i32(1).op(Op.i32_add).globalSet(GLOBAL_DEPTH);
    }
    if (this.spSave >= 0) fb.globalGet(GLOBAL_SP).localSet(this.spSave);
    if (frame > 0) {
      fb.globalGet(GLOBAL_SP).i32(frame).op(Op.i32_sub).localTee(this.fp).globalSet(GLOBAL_SP);
      fb.localGet(this.fp).i32(this.ctx.opts.stackLow).op(Op.i32_lt_s).blockOp(Op.if);
      this.trap(TrapCode.stackOverflow, f);
      fb.op(Op.end);
      for (const p of f.params) {
        if (!p.inMemory) continue;
        const off = this.frameOffset.get(p.id)!;
        const wasmIndex = f.params.indexOf(p) + this.paramBase;
        if (isAggregate(p.ty)) {
          // Structs arrive by address; the callee works on its own copy.
          fb.localGet(this.fp).i32(off).op(Op.i32_add).localGet(wasmIndex).i32(p.ty.size);
          fb.prefix(PrefixOp.memory_copy).u32(0).u32(0);
          continue;
        }
        fb.localGet(this.fp);
        fb.localGet(wasmIndex);
        this.store(p.ty, off);
      }
    }
    for (const v of f.locals) {
      const local = this.heapOf.get(v.id);
      if (local === undefined || this.vlas.has(v.id)) continue;
      fb.i64(BigInt(v.ty.size)).call(this.ctx.funcIndex.get("malloc")!);
      fb.localTee(local).op(Op.i32_eqz).blockOp(Op.if);
      this.trap(TrapCode.stackOverflow, f);
      fb.op(Op.end);
    }
    const shift = fb.code.length;
    for (let k = 0; k < bodyPositions.length; k += 3)
      fb.positions.push(bodyPositions[k]! + shift, bodyPositions[k + 1]!, bodyPositions[k + 2]!);
    for (let k = 0; k < bodyTraps.length; k += 2)
      fb.trapCodes.push(bodyTraps[k]! + shift, bodyTraps[k + 1]!);
    fb.code.append(body);
    releaseWriter(body);
    if (this.fuelLocal >= 0) this.settleFuel();
    for (const [id, local] of this.heapOf)
      if (!this.vlas.has(id)) fb.localGet(local).call(this.ctx.funcIndex.get("free")!);
    if (this.spSave >= 0) fb.localGet(this.spSave).globalSet(GLOBAL_SP);
    if (frame > 0) fb.localGet(this.fp).i32(frame).op(Op.i32_add).globalSet(GLOBAL_SP);
    if (mayRecurse) fb.globalGet(GLOBAL_DEPTH).i32(1).op(Op.i32_sub).globalSet(GLOBAL_DEPTH);
    if (this.ret >= 0) fb.localGet(this.ret);
    return fb;
  }

  // ---- helpers ----
  private tmp(t: ValType): number {
    return this.fb.addLocal(t);
  }
  private trap(code: number, at: { line: number; col: number }): void {
    this.fb.i32(code).i32(at.line).i32(at.col);
    this.callHost("trap");
  }
  /** Calls a core or host library function through the host bridge's table. */
  private callHost(name: string): void {
    const { entries, slots } = this.ctx.bridge;
    const slot = slots.get(name)!;
    this.fb.i32(slot).callIndirect(this.ctx.types.indexOf(entries[slot]!.sig), HOST_TABLE);
  }
  private scratchLocal(name: string, t: ValType): number {
    let idx = this.scratch.get(name);
    if (idx === undefined) {
      idx = this.fb.addLocal(t);
      this.scratch.set(name, idx);
    }
    return idx;
  }
  /** Whether a node's signed arithmetic must trap on overflow. */
  private checks(n: Node): boolean {
    return !!n.checked && !this.ctx.opts.wrapv;
  }
  /** With [a, b] on the stack, pushes a op b for signed integers and traps if it overflows
   * (UBSan's signed-integer-overflow check): int arithmetic is done exactly in 64 bits; long
   * addition and subtraction use the sign rule, multiplication a division check off the
   * fast path where both operands fit in 32 bits. */
  private checkedArith(
    op: "+" | "-" | "*",
    v: "i32" | "i64",
    at: Node,
    trapOp = op as string,
  ): void {
    const fb = this.fb;
    const code = overflowTrap(trapOp as (typeof OVERFLOW_OPS)[number], v === "i64");
    if (v === "i32") {
      const b = this.scratchLocal("i32b", "i32");
      const r = this.scratchLocal("i64r", "i64");
      fb.localSet(b).op(Op.i64_extend_i32_s).localGet(b).op(Op.i64_extend_i32_s);
      fb.op(op === "+" ? Op.i64_add : op === "-" ? Op.i64_sub : Op.i64_mul).localTee(r);
      fb.localGet(r).op(Op.i32_wrap_i64).op(Op.i64_extend_i32_s).op(Op.i64_ne).blockOp(Op.if);
      fb.at(at).trapHere(code);
      fb.op(Op.end).localGet(r).op(Op.i32_wrap_i64);
      return;
    }
    const a = this.scratchLocal("i64a", "i64");
    const b = this.scratchLocal("i64b", "i64");
    const r = this.scratchLocal("i64r", "i64");
    fb.localSet(b).localTee(a).localGet(b);
    if (op === "*") {
      fb.op(Op.i64_mul).localSet(r);
      const wide = (x: number): void => {
        fb.localGet(x).localGet(x).op(Op.i32_wrap_i64).op(Op.i64_extend_i32_s).op(Op.i64_ne);
      };
      wide(a);
      wide(b);
      fb.op(Op.i32_or).blockOp(Op.if);
      fb.localGet(a).i64(-1n).op(Op.i64_eq).blockOp(Op.if);
      fb.localGet(b)
        .i64(-(1n << 63n))
        .op(Op.i64_eq)
        .blockOp(Op.if);
      fb.at(at).trapHere(code);
      fb.op(Op.end).op(Op.else);
      fb.localGet(a).op(Op.i64_eqz).op(Op.i32_eqz).blockOp(Op.if);
      fb.localGet(r).localGet(a).op(Op.i64_div_s).localGet(b).op(Op.i64_ne).blockOp(Op.if);
      fb.at(at).trapHere(code);
      fb.op(Op.end).op(Op.end).op(Op.end).op(Op.end);
      fb.localGet(r);
      return;
    }
    fb.op(op === "+" ? Op.i64_add : Op.i64_sub).localTee(r);
    // add: a and b agree in sign and r does not; sub: a and b differ and r differs from a.
    if (op === "+") fb.localGet(a).op(Op.i64_xor).localGet(b).localGet(r).op(Op.i64_xor);
    else fb.localGet(a).op(Op.i64_xor).localGet(a).localGet(b).op(Op.i64_xor);
    fb.op(Op.i64_and).i64(0n).op(Op.i64_lt_s).blockOp(Op.if);
    fb.at(at).trapHere(code);
    fb.op(Op.end).localGet(r);
  }
  /** Burns `w` units of fuel from the shared tank; when it runs dry the host refills it or
   * stops the program. Used at the entry of functions that may recurse. */
  private meter(w: number): void {
    const fb = this.fb;
    fb.globalGet(GLOBAL_FUEL).i32(w).op(Op.i32_sub).globalSet(GLOBAL_FUEL);
    fb.globalGet(GLOBAL_FUEL).i32(0).op(Op.i32_lt_s).blockOp(Op.if);
    this.callHost("refuel");
    fb.op(Op.end);
  }
  /** Loop back-edges count into a wasm local (a register) and settle with the shared tank only
   * every LOCAL_FUEL_BATCH units and when the function returns, keeping hot loops tight. */
  private meterLoop(w: number): void {
    const fb = this.fb;
    if (this.fuelLocal < 0) this.fuelLocal = fb.addLocal("i32");
    const m = this.fuelLocal;
    fb.localGet(m).i32(w).op(Op.i32_add).localTee(m).i32(LOCAL_FUEL_BATCH).op(Op.i32_gt_s);
    fb.blockOp(Op.if);
    this.settleFuel();
    fb.globalGet(GLOBAL_FUEL).i32(0).op(Op.i32_lt_s).blockOp(Op.if);
    this.callHost("refuel");
    fb.op(Op.end);
    fb.op(Op.end);
  }
  /** Charges a counted loop's whole cost once, before it starts (see countedLoop). */
  private chargeCountedLoop(c: CountedLoop, w: number): void {
    const fb = this.fb;
    const t = this.tmp("i64");
    const toI64 = (ty: Type): void => {
      if (valType(ty) === "i32") fb.op(ty.unsigned ? Op.i64_extend_i32_u : Op.i64_extend_i32_s);
    };
    this.expr(c.bound);
    toI64(c.bound.ty!);
    fb.localGet(this.localOf.get(c.v.id)!);
    toI64(c.v.ty);
    fb.op(Op.i64_sub);
    if (c.inclusive) fb.i64(1n).op(Op.i64_add);
    if (c.step > 1)
      fb.i64(BigInt(c.step - 1))
        .op(Op.i64_add)
        .i64(BigInt(c.step))
        .op(Op.i64_div_s);
    fb.localTee(t).i64(0n).op(Op.i64_lt_s).blockOp(Op.if).i64(0n).localSet(t).op(Op.end);
    fb.localGet(t)
      .i64(BigInt(w))
      .op(Op.i64_mul)
      .localTee(t)
      .i64(1n << 30n)
      .op(Op.i64_gt_s);
    fb.blockOp(Op.if);
    fb.localGet(t).op(Op.f64_convert_i64_s);
    this.callHost("charge");
    fb.op(Op.else);
    if (this.fuelLocal < 0) this.fuelLocal = fb.addLocal("i32");
    const m = this.fuelLocal;
    fb.localGet(m).localGet(t).op(Op.i32_wrap_i64).op(Op.i32_add).localTee(m);
    fb.i32(LOCAL_FUEL_BATCH).op(Op.i32_gt_s).blockOp(Op.if);
    this.settleFuel();
    fb.globalGet(GLOBAL_FUEL).i32(0).op(Op.i32_lt_s).blockOp(Op.if);
    this.callHost("refuel");
    fb.op(Op.end);
    fb.op(Op.end);
    fb.op(Op.end);
  }

  private settleFuel(): void {
    const m = this.fuelLocal;
    this.fb.globalGet(GLOBAL_FUEL).localGet(m).op(Op.i32_sub).globalSet(GLOBAL_FUEL);
    this.fb.i32(0).localSet(m);
  }
  private depthOf(kind: Label): number {
    for (let i = this.labels.length - 1; i >= 0; i--)
      if (this.labels[i] === kind) return this.labels.length - 1 - i;
    throw new Error(`no enclosing ${kind}`);
  }

  private load(t: Type, offset: number): void {
    const fb = this.fb;
    switch (t.kind) {
      case "bool":
        fb.mem(Op.i32_load8_u, 0, offset);
        return;
      case "char":
        fb.mem(t.unsigned ? Op.i32_load8_u : Op.i32_load8_s, 0, offset);
        return;
      case "short":
        fb.mem(t.unsigned ? Op.i32_load16_u : Op.i32_load16_s, 1, offset);
        return;
      case "int":
      case "enum":
      case "ptr":
        fb.mem(Op.i32_load, 2, offset);
        return;
      case "long":
        fb.mem(Op.i64_load, 3, offset);
        return;
      case "float":
        fb.mem(Op.f32_load, 2, offset);
        return;
      case "double":
        fb.mem(Op.f64_load, 3, offset);
        return;
      default:
        // arrays, structs: the value is the address
        if (offset) fb.i32(offset).op(Op.i32_add);
    }
  }
  private store(t: Type, offset: number): void {
    const fb = this.fb;
    switch (t.kind) {
      case "bool":
      case "char":
        fb.mem(Op.i32_store8, 0, offset);
        return;
      case "short":
        fb.mem(Op.i32_store16, 1, offset);
        return;
      case "long":
        fb.mem(Op.i64_store, 3, offset);
        return;
      case "float":
        fb.mem(Op.f32_store, 2, offset);
        return;
      case "double":
        fb.mem(Op.f64_store, 3, offset);
        return;
      case "ptr":
        // The whole 8-byte slot, so the high half reads as zero to code that type-puns it.
        fb.op(Op.i64_extend_i32_u).mem(Op.i64_store, 3, offset);
        return;
      default:
        fb.mem(Op.i32_store, 2, offset);
    }
  }

  /** With the address on the stack, loads a bit-field: its storage unit, then the field's bits
   * (sign-extended when the field is signed). */
  private loadBits(t: Type, offset: number): void {
    const fb = this.fb;
    const { offset: lo, width } = t.bitField!;
    const w = t.size === 8 ? 64 : 32;
    this.loadUnit(t, offset);
    if (t.unsigned) {
      if (lo) this.constOf(w, BigInt(lo)).op(w === 64 ? Op.i64_shr_u : Op.i32_shr_u);
      if (width < w)
        this.constOf(w, (1n << BigInt(width)) - 1n).op(w === 64 ? Op.i64_and : Op.i32_and);
      return;
    }
    if (w - lo - width)
      this.constOf(w, BigInt(w - lo - width)).op(w === 64 ? Op.i64_shl : Op.i32_shl);
    if (w - width) this.constOf(w, BigInt(w - width)).op(w === 64 ? Op.i64_shr_s : Op.i32_shr_s);
  }
  /** With [address, value] on the stack, stores the value's low bits into a bit-field, keeping
   * the other bits of its storage unit. */
  private storeBits(t: Type, offset: number): void {
    const fb = this.fb;
    const { offset: lo, width } = t.bitField!;
    const w = t.size === 8 ? 64 : 32;
    const mask = (1n << BigInt(width)) - 1n;
    const value = this.scratchLocal(w === 64 ? "bits64" : "bits32", w === 64 ? "i64" : "i32");
    const addr = this.scratchLocal("bitsAddr", "i32");
    fb.localSet(value).localTee(addr).localGet(addr);
    this.loadUnit(t, offset);
    this.constOf(w, ~(mask << BigInt(lo))).op(w === 64 ? Op.i64_and : Op.i32_and);
    fb.localGet(value);
    this.constOf(w, mask).op(w === 64 ? Op.i64_and : Op.i32_and);
    if (lo) this.constOf(w, BigInt(lo)).op(w === 64 ? Op.i64_shl : Op.i32_shl);
    fb.op(w === 64 ? Op.i64_or : Op.i32_or);
    switch (t.size) {
      case 1:
        fb.mem(Op.i32_store8, 0, offset);
        return;
      case 2:
        fb.mem(Op.i32_store16, 1, offset);
        return;
      case 4:
        fb.mem(Op.i32_store, 2, offset);
        return;
      default:
        fb.mem(Op.i64_store, 3, offset);
    }
  }
  /** Cuts the value on the stack to what a bit-field of type `t` reads back after storing it
   * (the value of an assignment to it). */
  private truncateBits(t: Type): void {
    const { width } = t.bitField!;
    const w = t.size === 8 ? 64 : 32;
    if (width === w) return;
    if (t.unsigned) {
      this.constOf(w, (1n << BigInt(width)) - 1n).op(w === 64 ? Op.i64_and : Op.i32_and);
      return;
    }
    this.constOf(w, BigInt(w - width)).op(w === 64 ? Op.i64_shl : Op.i32_shl);
    this.constOf(w, BigInt(w - width)).op(w === 64 ? Op.i64_shr_s : Op.i32_shr_s);
  }
  /** A bit-field's whole storage unit, zero-extended. */
  private loadUnit(t: Type, offset: number): void {
    const fb = this.fb;
    switch (t.size) {
      case 1:
        fb.mem(Op.i32_load8_u, 0, offset);
        return;
      case 2:
        fb.mem(Op.i32_load16_u, 1, offset);
        return;
      case 4:
        fb.mem(Op.i32_load, 2, offset);
        return;
      default:
        fb.mem(Op.i64_load, 3, offset);
    }
  }
  /** Pushes an i32 or i64 constant (bits taken modulo the width). */
  private constOf(bits: 32 | 64, v: bigint): FuncBuilder {
    return bits === 64
      ? this.fb.i64(BigInt.asIntN(64, v))
      : this.fb.i32(Number(BigInt.asIntN(32, v)));
  }

  /** Pushes the base address of an lvalue and returns the constant offset to add to it.
   * `access`: the address will be loaded from or stored to (so a null pointer must trap);
   * false when only the address is wanted (`&p->x`, offsetof). */
  private addrParts(n: Node, access = true): number {
    const fb = this.fb;
    switch (n.kind) {
      case "var": {
        const v = n.v!;
        if (v.global) {
          fb.i32(0);
          return v.addr;
        }
        const heap = this.heapOf.get(v.id);
        if (heap !== undefined) {
          fb.localGet(heap);
          return 0;
        }
        const off = this.frameOffset.get(v.id);
        if (off === undefined) throw new Error(`variable '${v.name}' is not in memory`);
        fb.localGet(this.fp);
        return off;
      }
      case "deref": {
        const p = n.lhs!;
        // Fold constant index: p[3] → load offset 12.
        if (p.kind === "binary" && p.op === "+" && p.rhs!.kind === "num" && p.ty!.kind === "ptr") {
          const c = Number(BigInt.asIntN(32, p.rhs!.ival!));
          if (c >= 0 && c < 1 << 20) {
            this.expr(p.lhs!);
            if (access) this.nullCheck(n);
            return c;
          }
        }
        this.expr(p);
        if (access) this.nullCheck(n);
        return 0;
      }
      case "member":
        return this.addrParts(n.lhs!, access) + n.member!.offset;
      case "str":
        fb.i32(n.addr!);
        return 0;
      case "cond":
      case "call":
      case "assign":
      case "comma":
      case "stmtexpr":
        // struct-valued rvalues are addresses already
        this.expr(n);
        return 0;
      default:
        throw typeError("expression is not an lvalue", n);
    }
  }
  /** With an address on the stack, traps if it points into the null guard (NULL, or a small
   * offset from it: `p->next` of a NULL p). The C library's code is exempt (see Func.library). */
  private nullCheck(at: Node): void {
    const guard = this.ctx.opts.nullGuard ?? 0;
    if (guard === 0 || this.f.library) return;
    const fb = this.fb;
    const p = this.scratchLocal("nullp", "i32");
    fb.localTee(p).i32(guard).op(Op.i32_lt_u).blockOp(Op.if);
    fb.at(at).trapHere(TrapCode.nullPointer);
    fb.op(Op.end).localGet(p);
  }
  private addr(n: Node, access = false): void {
    const off = this.addrParts(n, access);
    if (off) this.fb.i32(off).op(Op.i32_add);
  }
  private isRegister(n: Node): boolean {
    return n.kind === "var" && !n.v!.global && !n.v!.inMemory;
  }

  // ---- conversions ----
  private convert(from: Type, to: Type): void {
    const fb = this.fb;
    if (to.kind === "void") {
      if (from.kind !== "void") fb.op(Op.drop);
      return;
    }
    const fv = valType(from);
    const tv = valType(to);
    if (to.kind === "bool") {
      this.truthy(from);
      fb.i32(0).op(Op.i32_ne);
      return;
    }
    if (fv !== tv) {
      const fu = !!from.unsigned;
      switch (`${fv}>${tv}`) {
        case "i32>i64":
          fb.op(fu ? Op.i64_extend_i32_u : Op.i64_extend_i32_s);
          break;
        case "i64>i32":
          fb.op(Op.i32_wrap_i64);
          break;
        case "i32>f32":
          fb.op(fu ? Op.f32_convert_i32_u : Op.f32_convert_i32_s);
          break;
        case "i32>f64":
          fb.op(fu ? Op.f64_convert_i32_u : Op.f64_convert_i32_s);
          break;
        case "i64>f32":
          fb.op(fu ? Op.f32_convert_i64_u : Op.f32_convert_i64_s);
          break;
        case "i64>f64":
          fb.op(fu ? Op.f64_convert_i64_u : Op.f64_convert_i64_s);
          break;
        case "f32>f64":
          fb.op(Op.f64_promote_f32);
          break;
        case "f64>f32":
          fb.op(Op.f32_demote_f64);
          break;
        case "f32>i32":
          fb.prefix(to.unsigned ? PrefixOp.i32_trunc_sat_f32_u : PrefixOp.i32_trunc_sat_f32_s);
          break;
        case "f64>i32":
          fb.prefix(to.unsigned ? PrefixOp.i32_trunc_sat_f64_u : PrefixOp.i32_trunc_sat_f64_s);
          break;
        case "f32>i64":
          fb.prefix(to.unsigned ? PrefixOp.i64_trunc_sat_f32_u : PrefixOp.i64_trunc_sat_f32_s);
          break;
        case "f64>i64":
          fb.prefix(to.unsigned ? PrefixOp.i64_trunc_sat_f64_u : PrefixOp.i64_trunc_sat_f64_s);
          break;
      }
    }
    this.narrow(to, from);
  }
  /** Keeps char/short values in range after arithmetic or conversion. */
  private narrow(to: Type, from?: Type): void {
    const fb = this.fb;
    if (to.kind !== "char" && to.kind !== "short") return;
    if (from) {
      if (from.kind === to.kind && !!from.unsigned === !!to.unsigned) return;
      if (from.kind === "bool") return;
      // Every char value fits in a short (and an unsigned char in an unsigned short).
      if (from.kind === "char" && to.kind === "short" && (from.unsigned || !to.unsigned)) return;
    }
    if (to.kind === "char") {
      if (to.unsigned) fb.i32(0xff).op(Op.i32_and);
      else fb.op(Op.i32_extend8_s);
    } else if (to.unsigned) fb.i32(0xffff).op(Op.i32_and);
    else fb.op(Op.i32_extend16_s);
  }
  /** Pushes an i32 that is nonzero exactly when the value of type `t` on the stack is. */
  private truthy(t: Type): void {
    const fb = this.fb;
    switch (valType(t)) {
      case "i64":
        fb.i64(0n).op(Op.i64_ne);
        break;
      case "f32":
        fb.f32(0).op(Op.f32_ne);
        break;
      case "f64":
        fb.f64(0).op(Op.f64_ne);
        break;
      default:
        break;
    }
  }
  private cond(n: Node): void {
    this.expr(n);
    this.truthy(n.ty!);
  }

  // ---- statements ----
  private stmt(n: Node): void {
    const fb = this.fb;
    switch (n.kind) {
      case "block":
        this.blockWithLabels(n, n.body!);
        return;
      case "label":
        // Arrived: a goto's journey down the statements on its label's path ends here.
        fb.i32(0).localSet(this.gotoTarget);
        this.stmt(n.then!);
        return;
      case "goto": {
        const label = this.labelNumber.get(n.label!)!;
        const d = this.dispatches.findLast((x) => x.labels.has(label));
        if (!d)
          throw new CompileError(
            "syntax",
            `goto '${n.label}' cannot reach its label from here (a label inside a switch or expression)`,
            n.line,
            n.col,
          );
        // A goto may go backward and form a loop, so it is metered like a loop's back edge.
        fb.at(n);
        this.meterLoop(1);
        fb.i32(label).localSet(this.gotoTarget);
        fb.br(this.depthOf(`dispatch:${d.id}`));
        return;
      }
      case "null":
        return;
      case "exprstmt":
        this.discard(n.lhs!);
        return;
      case "decl":
        this.decl(n);
        return;
      case "return": {
        if (n.lhs) {
          if (this.paramBase === 1) {
            fb.localGet(0);
            this.expr(n.lhs);
            fb.i32(this.f.ty.ret!.size).prefix(PrefixOp.memory_copy).u32(0).u32(0);
            fb.localGet(0).localSet(this.ret);
          } else if (this.ret >= 0) {
            this.expr(n.lhs);
            fb.localSet(this.ret);
          } else this.discard(n.lhs);
        }
        fb.br(this.labels.length - 1);
        return;
      }
      case "if": {
        const inside = this.labelsIn.get(n);
        if (inside) {
          // On a goto's path, the branch holding the label is taken without the condition.
          const thenLabels = this.labelsIn.get(n.then!);
          fb.localGet(this.gotoTarget).op(Op.i32_eqz).blockOp(Op.if, "i32");
          this.bool(n.cond!);
          fb.op(Op.else);
          this.isOneOf(thenLabels);
          fb.op(Op.end);
        } else this.cond(n.cond!);
        fb.blockOp(Op.if);
        this.labels.push("other");
        this.stmt(n.then!);
        if (n.els) {
          fb.op(Op.else);
          this.stmt(n.els);
        }
        this.labels.pop();
        fb.op(Op.end);
        return;
      }
      case "for": {
        const entered = this.labelsIn.has(n);
        if (n.init && entered) {
          // A goto into the body skips the initialization and the first test.
          fb.localGet(this.gotoTarget).op(Op.i32_eqz).blockOp(Op.if);
          this.labels.push("other");
          this.stmt(n.init);
          this.labels.pop();
          fb.op(Op.end);
        } else if (n.init) this.stmt(n.init);
        const w = weight(n.then) + weight(n.cond) + weight(n.inc);
        const counted = entered ? null : countedLoop(n);
        this.fb.at(n);
        if (counted) this.chargeCountedLoop(counted, w);
        fb.blockOp(Op.block);
        this.labels.push("break");
        fb.blockOp(Op.loop);
        this.labels.push("other");
        if (n.cond && entered) {
          fb.localGet(this.gotoTarget).blockOp(Op.if, "i32").i32(1).op(Op.else);
          this.bool(n.cond);
          fb.op(Op.end).op(Op.i32_eqz).brIf(1);
        } else if (n.cond) {
          this.cond(n.cond);
          fb.op(Op.i32_eqz).brIf(1);
        }
        fb.blockOp(Op.block);
        this.labels.push("continue");
        this.stmt(n.then!);
        fb.op(Op.end);
        this.labels.pop();
        if (n.inc) this.discard(n.inc);
        if (!counted) this.fb.at(n);
        if (!counted) this.meterLoop(w);
        fb.br(0);
        fb.op(Op.end);
        this.labels.pop();
        fb.op(Op.end);
        this.labels.pop();
        return;
      }
      case "do": {
        fb.blockOp(Op.block);
        this.labels.push("break");
        fb.blockOp(Op.loop);
        this.labels.push("other");
        fb.blockOp(Op.block);
        this.labels.push("continue");
        this.stmt(n.then!);
        fb.op(Op.end);
        this.labels.pop();
        this.fb.at(n);
        this.meterLoop(weight(n.then) + weight(n.cond));
        this.cond(n.cond!);
        fb.brIf(0);
        fb.op(Op.end);
        this.labels.pop();
        fb.op(Op.end);
        this.labels.pop();
        return;
      }
      case "switch":
        this.switchStmt(n);
        return;
      case "case":
        // Only in a switch whose cases sit in nested statements (see generalSwitch).
        fb.i32(0).localSet(this.gotoTarget);
        this.stmt(n.then!);
        return;
      case "break":
        fb.br(this.depthOf("break"));
        return;
      case "continue":
        fb.br(this.depthOf("continue"));
        return;
      default:
        throw new Error(`unexpected statement ${n.kind}`);
    }
  }

  /** Pushes 1 when the goto target is one of `labels` (none: 0). */
  private isOneOf(labels: Set<number> | undefined): void {
    const fb = this.fb;
    const list = [...(labels ?? [])];
    if (list.length === 0) {
      fb.i32(0);
      return;
    }
    list.forEach((l, i) => {
      fb.localGet(this.gotoTarget).i32(l).op(Op.i32_eq);
      if (i > 0) fb.op(Op.i32_or);
    });
  }

  /** A block holding labels (at any depth) becomes a dispatch loop. Its statements are cut
   * into segments, each starting at a statement that holds a label; a goto sets the label's
   * number and branches to the loop's top, where a br_table enters the segment on the
   * label's path (statements on the way, if/for/blocks, follow the same number):
   *   loop $d (block (block … (br_table … (local.get target)) seg0 …) segK) end */
  private blockWithLabels(block: Node, stmts: Node[]): void {
    const fb = this.fb;
    const inside = this.labelsIn.get(block);
    const entries: number[] = [];
    stmts.forEach((s, i) => {
      if (this.labelsIn.has(s)) entries.push(i);
    });
    if (!inside || entries.length === 0) {
      for (const s of stmts) this.stmt(s);
      return;
    }
    const d: Dispatch = { id: this.dispatchCount++, labels: inside };
    const k = entries.length;
    const segmentOf = new Array<number>(this.labelNumber.size + this.caseNumber.size + 1).fill(0);
    entries.forEach((i, seg) => {
      for (const l of this.labelsIn.get(stmts[i]!)!) segmentOf[l] = seg + 1;
    });
    fb.blockOp(Op.loop);
    this.labels.push(`dispatch:${d.id}`);
    this.dispatches.push(d);
    for (let i = 0; i <= k; i++) {
      fb.blockOp(Op.block);
      this.labels.push("other");
    }
    fb.localGet(this.gotoTarget);
    fb.op(Op.br_table).u32(segmentOf.length);
    for (const seg of segmentOf) fb.u32(seg);
    fb.u32(0);
    let i = 0;
    for (let seg = 0; seg <= k; seg++) {
      fb.op(Op.end);
      this.labels.pop();
      const end = seg < k ? entries[seg]! : stmts.length;
      for (; i < end; i++) this.stmt(stmts[i]!);
    }
    this.dispatches.pop();
    fb.op(Op.end);
    this.labels.pop();
  }

  /** The cases of a switch that are not at the top of its body (Duff's device, a case inside
   * an if): each becomes a numbered label that the dispatch of the blocks on its path enters. */
  private static nestedCases(n: Node): Node[] {
    const items = n.then!.kind === "block" ? n.then!.body! : [n.then!];
    const top = new Set<Node>();
    for (let s of items) while (s.kind === "case") (top.add(s), (s = s.then!));
    return (n.cases ?? []).map((c) => c.node).filter((c) => !top.has(c));
  }

  /** A switch with nested cases: pick the case's label number, then run the body, whose
   * dispatch loops enter the statements on that case's path. */
  private generalSwitch(n: Node, sel: number): void {
    const fb = this.fb;
    const is64 = valType(n.cond!.ty!) === "i64";
    fb.blockOp(Op.block);
    this.labels.push("break");
    fb.blockOp(Op.block);
    this.labels.push("other");
    let fallback = -1;
    for (const c of n.cases ?? []) {
      const num = this.caseNumber.get(c.node)!;
      if (c.value === null) {
        fallback = num;
        continue;
      }
      fb.localGet(sel);
      if (is64) fb.i64(c.value).op(Op.i64_eq);
      else fb.i32(Number(BigInt.asIntN(32, c.value))).op(Op.i32_eq);
      fb.blockOp(Op.if).i32(num).localSet(this.gotoTarget).br(1).op(Op.end);
    }
    if (fallback >= 0) fb.i32(fallback).localSet(this.gotoTarget);
    else fb.br(1);
    fb.op(Op.end);
    this.labels.pop();
    this.stmt(n.then!);
    fb.op(Op.end);
    this.labels.pop();
  }

  private switchStmt(n: Node): void {
    const fb = this.fb;
    const sel = this.tmp(valType(n.cond!.ty!));
    this.expr(n.cond!);
    fb.localSet(sel);
    if (this.caseNumber.has(n.cases?.[0]?.node as Node)) {
      this.generalSwitch(n, sel);
      return;
    }
    // Split the body into segments, each starting at a run of case labels.
    const items = n.then!.kind === "block" ? n.then!.body! : [n.then!];
    const segments: { values: (bigint | null)[]; stmts: Node[] }[] = [];
    for (const item of items) {
      let s: Node = item;
      if (s.kind === "case") {
        const values: (bigint | null)[] = [];
        while (s.kind === "case") {
          values.push(s.caseValue!);
          s = s.then!;
        }
        segments.push({ values, stmts: [s] });
      } else if (segments.length > 0) segments[segments.length - 1]!.stmts.push(s);
      // statements before the first label can never run
    }
    const k = segments.length;
    const is64 = valType(n.cond!.ty!) === "i64";
    fb.blockOp(Op.block);
    this.labels.push("break");
    for (let i = 0; i < k; i++) {
      fb.blockOp(Op.block);
      this.labels.push("other");
    }
    let defaultSeg = -1;
    segments.forEach((seg, i) => {
      for (const v of seg.values) {
        if (v === null) {
          defaultSeg = i;
          continue;
        }
        fb.localGet(sel);
        if (is64) fb.i64(v).op(Op.i64_eq);
        else fb.i32(Number(BigInt.asIntN(32, v))).op(Op.i32_eq);
        fb.brIf(i);
      }
    });
    fb.br(defaultSeg >= 0 ? defaultSeg : k);
    for (let i = 0; i < k; i++) {
      fb.op(Op.end);
      this.labels.pop();
      for (const s of segments[i]!.stmts) this.stmt(s);
    }
    fb.op(Op.end);
    this.labels.pop();
  }

  private decl(n: Node): void {
    const v = n.v!;
    const init = n.initializer;
    const fb = this.fb;
    if (v.ty.vlaCount) {
      // Carve the array out of the shadow stack; the function restores sp when it returns.
      const count = this.localOf.get(v.ty.vlaCount.id)!;
      const addr = this.heapOf.get(v.id)!;
      this.expr(n.rhs!);
      fb.localTee(count).i32(0).op(Op.i32_lt_s);
      fb.localGet(count)
        .i32(Math.floor(0x7fffffff / Math.max(v.ty.base!.size, 1)))
        .op(Op.i32_gt_s);
      fb.op(Op.i32_or).blockOp(Op.if);
      this.trap(TrapCode.stackOverflow, n);
      fb.op(Op.end);
      fb.globalGet(GLOBAL_SP).localGet(count).i32(v.ty.base!.size).op(Op.i32_mul).op(Op.i32_sub);
      fb.i32(-16).op(Op.i32_and).localTee(addr).globalSet(GLOBAL_SP);
      fb.localGet(addr).i32(this.ctx.opts.stackLow).op(Op.i32_lt_s).blockOp(Op.if);
      this.trap(TrapCode.stackOverflow, n);
      fb.op(Op.end);
      return;
    }
    if (!v.inMemory && !v.global) {
      if (init) {
        this.expr(init.expr!);
        fb.localSet(this.localOf.get(v.id)!);
      }
      return;
    }
    if (!init) return;
    if (isAggregate(v.ty) || v.ty.kind === "array") {
      if (init.expr) {
        // struct copy: s = other
        this.addr(n.lhs!);
        this.expr(init.expr);
        fb.i32(v.ty.size).prefix(PrefixOp.memory_copy).u32(0).u32(0);
        return;
      }
      this.addr(n.lhs!);
      fb.i32(0).i32(v.ty.size).prefix(PrefixOp.memory_fill).u32(0);
    }
    this.initStore(n.lhs!, init, 0);
  }

  private initStore(target: Node, init: Initializer, offset: number): void {
    const fb = this.fb;
    if (init.bytes) {
      // Store the literal's bytes four at a time where possible.
      const b = init.bytes;
      for (let i = 0; i < b.length;) {
        if (i + 4 <= b.length) {
          const w = b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24);
          if (w !== 0) {
            const base = this.addrParts(target);
            fb.i32(w);
            fb.mem(Op.i32_store, 0, base + offset + i);
          }
          i += 4;
        } else {
          if (b[i] !== 0) {
            const base = this.addrParts(target);
            fb.i32(b[i]!);
            fb.mem(Op.i32_store8, 0, base + offset + i);
          }
          i++;
        }
      }
      return;
    }
    if (init.items) {
      for (const it of init.items) this.initStore(target, it.init, offset + it.offset);
      return;
    }
    if (isAggregate(init.ty)) {
      this.addr(target);
      if (offset) fb.i32(offset).op(Op.i32_add);
      this.expr(init.expr!);
      fb.i32(init.ty.size).prefix(PrefixOp.memory_copy).u32(0).u32(0);
      return;
    }
    const base = this.addrParts(target);
    this.expr(init.expr!);
    this.storeLvalue(init.ty, base + offset);
  }

  // ---- expressions ----
  /** Evaluates for side effects only. */
  private discard(n: Node): void {
    if (n.line > 0) this.fb.at(n);
    switch (n.kind) {
      case "assign":
        this.assign(n, true);
        return;
      case "opassign":
        this.opAssign(n, true);
        return;
      case "incdec":
        this.incdec(n, true);
        return;
      case "comma":
        this.discard(n.lhs!);
        this.discard(n.rhs!);
        return;
      case "cast":
        if (n.ty!.kind === "void") {
          this.discard(n.lhs!);
          return;
        }
        break;
    }
    this.expr(n);
    if (n.ty!.kind !== "void") this.fb.op(Op.drop);
  }

  private expr(n: Node): void {
    const fb = this.fb;
    if (n.line > 0) fb.at(n);
    switch (n.kind) {
      case "num": {
        const t = n.ty!;
        switch (valType(t)) {
          case "i32":
            fb.i32(Number(BigInt.asIntN(32, n.ival!)));
            break;
          case "i64":
            fb.i64(n.ival!);
            break;
          case "f32":
            fb.f32(n.fval!);
            break;
          case "f64":
            fb.f64(n.fval!);
            break;
        }
        return;
      }
      case "str":
        fb.i32(n.addr!);
        return;
      case "var": {
        if (this.isRegister(n)) {
          fb.localGet(this.localOf.get(n.v!.id)!);
          return;
        }
        const off = this.addrParts(n);
        this.load(n.ty!, off);
        return;
      }
      case "funcref": {
        const name = n.callee!;
        if (!this.ctx.opts.funcs.get(name)?.body && !this.ctx.funcIndex.has(name))
          throw typeError(`cannot take the address of library function '${name}'`, n);
        fb.i32(this.ctx.opts.slotOf(name));
        return;
      }
      case "deref":
      case "member": {
        const off = this.addrParts(n);
        fb.at(n);
        this.loadLvalue(n.ty!, off);
        return;
      }
      case "addr":
        this.addr(n.lhs!);
        return;
      case "assign":
        this.assign(n, false);
        return;
      case "opassign":
        this.opAssign(n, false);
        return;
      case "incdec":
        this.incdec(n, false);
        return;
      case "comma":
        this.discard(n.lhs!);
        this.expr(n.rhs!);
        return;
      case "cast":
        if (n.ty!.kind === "void") {
          this.discard(n.lhs!);
          return;
        }
        this.expr(n.lhs!);
        this.convert(
          n.lhs!.ty!.kind === "array" || n.lhs!.ty!.kind === "func" ? T.uint : n.lhs!.ty!,
          n.ty!,
        );
        return;
      case "neg": {
        const t = n.ty!;
        const v = valType(t);
        if (v === "i32") {
          fb.i32(0);
          this.expr(n.lhs!);
          if (this.checks(n)) this.checkedArith("-", v, n, "unary -");
          else fb.op(Op.i32_sub);
        } else if (v === "i64") {
          fb.i64(0n);
          this.expr(n.lhs!);
          if (this.checks(n)) this.checkedArith("-", v, n, "unary -");
          else fb.op(Op.i64_sub);
        } else {
          this.expr(n.lhs!);
          fb.op(v === "f32" ? Op.f32_neg : Op.f64_neg);
        }
        return;
      }
      case "bitnot": {
        this.expr(n.lhs!);
        if (valType(n.ty!) === "i64") fb.i64(-1n).op(Op.i64_xor);
        else fb.i32(-1).op(Op.i32_xor);
        return;
      }
      case "not": {
        const t = n.lhs!.ty!;
        this.expr(n.lhs!);
        switch (valType(t)) {
          case "i64":
            fb.op(Op.i64_eqz);
            break;
          case "f32":
            fb.f32(0).op(Op.f32_eq);
            break;
          case "f64":
            fb.f64(0).op(Op.f64_eq);
            break;
          default:
            fb.op(Op.i32_eqz);
        }
        return;
      }
      case "logand":
      case "logor": {
        this.cond(n.lhs!);
        if (n.kind === "logand") {
          fb.blockOp(Op.if, "i32");
          this.labels.push("other");
          this.bool(n.rhs!);
          fb.op(Op.else).i32(0).op(Op.end);
        } else {
          fb.blockOp(Op.if, "i32");
          this.labels.push("other");
          fb.i32(1).op(Op.else);
          this.bool(n.rhs!);
          fb.op(Op.end);
        }
        this.labels.pop();
        return;
      }
      case "cond": {
        this.cond(n.cond!);
        const t = n.ty!;
        if (t.kind === "void") fb.blockOp(Op.if);
        else fb.blockOp(Op.if, valType(t));
        this.labels.push("other");
        if (t.kind === "void") this.discard(n.then!);
        else this.expr(n.then!);
        fb.op(Op.else);
        if (t.kind === "void") this.discard(n.els!);
        else this.expr(n.els!);
        fb.op(Op.end);
        this.labels.pop();
        return;
      }
      case "binary":
        this.binary(n);
        return;
      case "call":
        this.call(n);
        return;
      case "stmtexpr": {
        const body = n.body!;
        const last = body[body.length - 1];
        const valued = n.ty!.kind !== "void" && last?.kind === "exprstmt";
        this.blockWithLabels(n, valued ? body.slice(0, -1) : body);
        if (valued) this.expr(last.lhs!);
        return;
      }
      default:
        throw new Error(`unexpected expression ${n.kind}`);
    }
  }

  /** Pushes exactly 0 or 1. */
  private bool(n: Node): void {
    const k = n.kind;
    if (k === "not" || k === "logand" || k === "logor") {
      this.expr(n);
      return;
    }
    if (k === "binary" && ["==", "!=", "<", "<=", ">", ">="].includes(n.op!)) {
      this.expr(n);
      return;
    }
    this.cond(n);
    this.fb.i32(0).op(Op.i32_ne);
  }

  private binary(n: Node): void {
    const fb = this.fb;
    const op = n.op!;
    const t = n.opTy ?? n.ty!;
    const v = valType(t);
    const unsigned = !!t.unsigned || t.kind === "ptr";
    if (n.lhs !== PUSHED) this.expr(n.lhs!);
    if ((op === "/" || op === "%") && (v === "i32" || v === "i64")) {
      // An explicit check, so the error carries the operator's position.
      const d = this.tmp(v);
      this.expr(n.rhs!);
      fb.localTee(d);
      fb.op(v === "i32" ? Op.i32_eqz : Op.i64_eqz).blockOp(Op.if);
      this.trap(TrapCode.divisionByZero, n);
      fb.op(Op.end).localGet(d);
    } else this.expr(n.rhs!);
    const I32: Record<string, number> = {
      "+": Op.i32_add,
      "-": Op.i32_sub,
      "*": Op.i32_mul,
      "/": unsigned ? Op.i32_div_u : Op.i32_div_s,
      "%": unsigned ? Op.i32_rem_u : Op.i32_rem_s,
      "<<": Op.i32_shl,
      ">>": unsigned ? Op.i32_shr_u : Op.i32_shr_s,
      "&": Op.i32_and,
      "|": Op.i32_or,
      "^": Op.i32_xor,
      "==": Op.i32_eq,
      "!=": Op.i32_ne,
      "<": unsigned ? Op.i32_lt_u : Op.i32_lt_s,
      "<=": unsigned ? Op.i32_le_u : Op.i32_le_s,
      ">": unsigned ? Op.i32_gt_u : Op.i32_gt_s,
      ">=": unsigned ? Op.i32_ge_u : Op.i32_ge_s,
    };
    const I64: Record<string, number> = {
      "+": Op.i64_add,
      "-": Op.i64_sub,
      "*": Op.i64_mul,
      "/": unsigned ? Op.i64_div_u : Op.i64_div_s,
      "%": unsigned ? Op.i64_rem_u : Op.i64_rem_s,
      "<<": Op.i64_shl,
      ">>": unsigned ? Op.i64_shr_u : Op.i64_shr_s,
      "&": Op.i64_and,
      "|": Op.i64_or,
      "^": Op.i64_xor,
      "==": Op.i64_eq,
      "!=": Op.i64_ne,
      "<": unsigned ? Op.i64_lt_u : Op.i64_lt_s,
      "<=": unsigned ? Op.i64_le_u : Op.i64_le_s,
      ">": unsigned ? Op.i64_gt_u : Op.i64_gt_s,
      ">=": unsigned ? Op.i64_ge_u : Op.i64_ge_s,
    };
    const F32: Record<string, number> = {
      "+": Op.f32_add,
      "-": Op.f32_sub,
      "*": Op.f32_mul,
      "/": Op.f32_div,
      "==": Op.f32_eq,
      "!=": Op.f32_ne,
      "<": Op.f32_lt,
      "<=": Op.f32_le,
      ">": Op.f32_gt,
      ">=": Op.f32_ge,
    };
    const F64: Record<string, number> = {
      "+": Op.f64_add,
      "-": Op.f64_sub,
      "*": Op.f64_mul,
      "/": Op.f64_div,
      "==": Op.f64_eq,
      "!=": Op.f64_ne,
      "<": Op.f64_lt,
      "<=": Op.f64_le,
      ">": Op.f64_gt,
      ">=": Op.f64_ge,
    };
    const table = v === "i32" ? I32 : v === "i64" ? I64 : v === "f32" ? F32 : F64;
    const code = table[op];
    if (code === undefined)
      throw typeError(`operator '${op}' cannot be applied to '${typeName(t)}'`, n);
    if (op === "/" || op === "%") fb.at(n).trapPoint();
    if ((op === "+" || op === "-" || op === "*") && (v === "i32" || v === "i64") && this.checks(n))
      this.checkedArith(op, v, n);
    else fb.op(code);
  }

  private assign(n: Node, discard: boolean): void {
    const fb = this.fb;
    const l = n.lhs!;
    const t = n.ty!;
    if (this.isRegister(l)) {
      this.expr(n.rhs!);
      const idx = this.localOf.get(l.v!.id)!;
      if (discard) fb.localSet(idx);
      else fb.localTee(idx);
      return;
    }
    if (isAggregate(t)) {
      const dst = this.tmp("i32");
      this.addr(l, true);
      fb.localTee(dst);
      this.expr(n.rhs!);
      fb.i32(t.size).prefix(PrefixOp.memory_copy).u32(0).u32(0);
      if (!discard) fb.localGet(dst);
      return;
    }
    const off = this.addrParts(l);
    this.expr(n.rhs!);
    let val = -1;
    if (!discard) {
      if (t.bitField) this.truncateBits(t);
      val = this.tmp(valType(t));
      fb.localTee(val);
    }
    fb.at(n);
    this.storeLvalue(t, off);
    if (!discard) fb.localGet(val);
  }

  /** Stores [address, value] into an lvalue of type `t`, a bit-field or a whole object. */
  private storeLvalue(t: Type, offset: number): void {
    if (t.bitField) this.storeBits(t, offset);
    else this.store(t, offset);
  }
  /** Loads an lvalue of type `t` from the address on the stack. */
  private loadLvalue(t: Type, offset: number): void {
    if (t.bitField) this.loadBits(t, offset);
    else this.load(t, offset);
  }

  /** Applies `lhs op= rhs` with the loaded value on the stack. */
  private applyOp(n: Node): void {
    const t = n.ty!;
    const opTy = n.opTy!;
    const ptrStep = t.kind === "ptr";
    if (!ptrStep) this.convert(t, opTy);
    this.binary({ ...n, kind: "binary", lhs: PUSHED, ty: opTy, opTy });
    if (!ptrStep) this.convert(opTy, t);
  }

  private opAssign(n: Node, discard: boolean): void {
    const fb = this.fb;
    const l = n.lhs!;
    const t = n.ty!;
    if (this.isRegister(l)) {
      const idx = this.localOf.get(l.v!.id)!;
      fb.localGet(idx);
      this.applyOp(n);
      if (discard) fb.localSet(idx);
      else fb.localTee(idx);
      return;
    }
    const base = this.tmp("i32");
    const off = this.addrParts(l);
    fb.at(n);
    fb.localTee(base).localGet(base);
    this.loadLvalue(t, off);
    this.applyOp(n);
    let val = -1;
    if (!discard) {
      if (t.bitField) this.truncateBits(t);
      val = this.tmp(valType(t));
      fb.localTee(val);
    }
    fb.at(n);
    this.storeLvalue(t, off);
    if (!discard) fb.localGet(val);
  }

  private addDelta(t: Type, delta: number, n: Node): void {
    const fb = this.fb;
    const checked = this.checks(n);
    switch (valType(t)) {
      case "i32":
        fb.i32(delta);
        if (checked) this.checkedArith("+", "i32", n);
        else fb.op(Op.i32_add);
        this.narrow(t);
        break;
      case "i64":
        fb.i64(BigInt(delta));
        if (checked) this.checkedArith("+", "i64", n);
        else fb.op(Op.i64_add);
        break;
      case "f32":
        fb.f32(delta).op(Op.f32_add);
        break;
      case "f64":
        fb.f64(delta).op(Op.f64_add);
        break;
    }
    if (t.kind === "bool") fb.i32(0).op(Op.i32_ne);
  }

  private incdec(n: Node, discard: boolean): void {
    const fb = this.fb;
    const l = n.lhs!;
    const t = n.ty!;
    const vt = valType(t);
    if (this.isRegister(l)) {
      const idx = this.localOf.get(l.v!.id)!;
      if (!discard && !n.prefix) fb.localGet(idx);
      fb.localGet(idx);
      this.addDelta(t, n.delta!, n);
      if (discard || !n.prefix) fb.localSet(idx);
      else fb.localTee(idx);
      return;
    }
    const base = this.tmp("i32");
    const off = this.addrParts(l);
    fb.at(n);
    fb.localTee(base).localGet(base);
    this.loadLvalue(t, off);
    let keep = -1;
    if (!discard) {
      keep = this.tmp(vt);
      if (!n.prefix) fb.localTee(keep);
    }
    this.addDelta(t, n.delta!, n);
    if (t.bitField && !discard && n.prefix) this.truncateBits(t);
    if (!discard && n.prefix) fb.localTee(keep);
    this.storeLvalue(t, off);
    if (!discard) fb.localGet(keep);
  }

  // ---- calls ----
  private call(n: Node): void {
    const fb = this.fb;
    const name = n.callee;
    const args = n.args!;
    if (name !== undefined) {
      const user = this.ctx.opts.funcs.get(name);
      if (user && user.body) {
        this.structResultBuffer(user.ty);
        const nFixed = user.ty.params!.length;
        for (const a of args.slice(0, nFixed)) this.expr(a);
        if (user.ty.variadic) this.varargs(args.slice(nFixed));
        fb.call(this.ctx.funcIndex.get(name)!);
        if (user.ty.ret!.kind === "void" && n.ty!.kind !== "void") fb.i32(0);
        return;
      }
      if (INLINE_FUNCTIONS.has(name)) {
        this.inline(name, n);
        return;
      }
      const idx = this.ctx.importIndex.get(name);
      const hostSlot = this.ctx.bridge.slots.get(name);
      if (idx === undefined && hostSlot === undefined)
        throw typeError(`unknown function '${name}'`, n);
      const fty = n.fnTy!;
      const params = fty.params!;
      if (fty.variadic) {
        // Evaluate every argument first (they may call printf themselves), then lay them out.
        const fixed = args.slice(0, params.length);
        const extra = args.slice(params.length);
        for (const a of fixed) {
          this.expr(a);
          this.hostArg(a.ty!);
        }
        this.varargs(extra);
      } else {
        for (const a of args) {
          this.expr(a);
          this.hostArg(a.ty!);
        }
      }
      fb.at(n);
      if (idx !== undefined) fb.call(idx);
      else this.callHost(name);
      this.hostResult(fty.ret!);
      if (fty.ret!.kind === "void" && n.ty!.kind !== "void") fb.i32(0);
      return;
    }
    // Through a function pointer. With `()` in its type, the arguments decide the signature.
    const declared = n.fnTy!;
    const fty =
      declared.oldStyle && args.length > 0
        ? { ...declared, params: args.map((a) => a.ty!), oldStyle: false }
        : declared;
    this.structResultBuffer(fty);
    for (const a of args.slice(0, fty.params!.length)) this.expr(a);
    if (fty.variadic) this.varargs(args.slice(fty.params!.length));
    this.expr(n.lhs!);
    fb.callIndirect(this.ctx.types.indexOf(userSig(fty)), FUNCTION_TABLE);
  }

  /** For a callee returning a struct: reserve a frame slot and pass its address. */
  private structResultBuffer(fty: Type): void {
    const ret = fty.ret!;
    if (!isAggregate(ret)) return;
    const align = Math.max(ret.align, 8);
    this.tempBytes = Math.ceil(this.tempBytes / align) * align;
    const off = this.varargOffset + this.varargBytes + this.tempBytes;
    this.tempBytes += ret.size;
    this.fb.localGet(this.fp).i32(off).op(Op.i32_add);
  }

  /** Lays out variadic arguments in the frame's 8-byte slots and pushes the area's address.
   * Every argument is evaluated before any slot is written (they may be variadic calls too). */
  private varargs(extra: Node[]): void {
    const fb = this.fb;
    let slot = 0;
    const temps = extra.map((a) => {
      this.expr(a);
      const vt = valType(a.ty!.kind === "array" || a.ty!.kind === "func" ? T.uint : a.ty!);
      const tmp = this.tmp(vt);
      fb.localSet(tmp);
      const at = slot;
      slot += varargSlots(a.ty!);
      return { tmp, ty: a.ty!, vt, at };
    });
    this.varargBytes = Math.max(this.varargBytes, slot * 8);
    temps.forEach(({ tmp, ty, vt, at }) => {
      const i = at;
      if (isAggregate(ty)) {
        // A struct travels by value: its bytes are copied into its slots.
        fb.localGet(this.fp)
          .i32(this.varargOffset + i * 8)
          .op(Op.i32_add);
        fb.localGet(tmp).i32(ty.size).prefix(PrefixOp.memory_copy).u32(0).u32(0);
        return;
      }
      fb.localGet(this.fp);
      fb.localGet(tmp);
      if (vt === "i32")
        fb.op(
          ty.unsigned || ty.kind === "ptr" || ty.kind === "array"
            ? Op.i64_extend_i32_u
            : Op.i64_extend_i32_s,
        );
      if (vt === "f64") fb.mem(Op.f64_store, 3, this.varargOffset + i * 8);
      else fb.mem(Op.i64_store, 3, this.varargOffset + i * 8);
    });
    fb.localGet(this.fp);
    if (this.varargOffset) fb.i32(this.varargOffset).op(Op.i32_add);
  }

  private hostArg(t: Type): void {
    const fb = this.fb;
    const v = valType(t);
    if (v === "i64") fb.op(t.unsigned ? Op.f64_convert_i64_u : Op.f64_convert_i64_s);
    else if (v === "f32") fb.op(Op.f64_promote_f32);
  }
  private hostResult(t: Type): void {
    const fb = this.fb;
    const v = valType(t);
    if (t.kind === "void") return;
    if (v === "i64")
      fb.prefix(t.unsigned ? PrefixOp.i64_trunc_sat_f64_u : PrefixOp.i64_trunc_sat_f64_s);
    else if (v === "f32") fb.op(Op.f32_demote_f64);
  }

  private inline(name: string, n: Node): void {
    const fb = this.fb;
    const a = n.args!;
    const one = (): void => this.expr(a[0]!);
    switch (name) {
      case "sqrt":
        one();
        fb.op(Op.f64_sqrt);
        return;
      case "sqrtf":
        one();
        fb.op(Op.f32_sqrt);
        return;
      case "fabs":
        one();
        fb.op(Op.f64_abs);
        return;
      case "fabsf":
        one();
        fb.op(Op.f32_abs);
        return;
      case "floor":
        one();
        fb.op(Op.f64_floor);
        return;
      case "ceil":
        one();
        fb.op(Op.f64_ceil);
        return;
      case "trunc":
        one();
        fb.op(Op.f64_trunc);
        return;
      case "fmin":
      case "fmax": {
        // C's rule: a NaN operand is ignored (wasm's min/max would return NaN).
        const x = this.tmp("f64");
        const y = this.tmp("f64");
        one();
        fb.localSet(x);
        this.expr(a[1]!);
        fb.localSet(y);
        fb.localGet(x).localGet(x).op(Op.f64_ne).blockOp(Op.if, "f64").localGet(y).op(Op.else);
        fb.localGet(y).localGet(y).op(Op.f64_ne).blockOp(Op.if, "f64").localGet(x).op(Op.else);
        fb.localGet(x)
          .localGet(y)
          .op(name === "fmin" ? Op.f64_min : Op.f64_max);
        fb.op(Op.end).op(Op.end);
        return;
      }
      case "abs":
      case "labs":
      case "llabs": {
        const vt = valType(a[0]!.ty!);
        const t = this.tmp(vt);
        one();
        fb.localSet(t);
        if (vt === "i64") {
          fb.i64(0n)
            .localGet(t)
            .op(Op.i64_sub)
            .localGet(t)
            .localGet(t)
            .i64(0n)
            .op(Op.i64_lt_s)
            .op(Op.select);
        } else {
          fb.i32(0)
            .localGet(t)
            .op(Op.i32_sub)
            .localGet(t)
            .localGet(t)
            .i32(0)
            .op(Op.i32_lt_s)
            .op(Op.select);
        }
        return;
      }
      case "memset":
      case "memcpy":
      case "memmove": {
        const d = this.tmp("i32");
        one();
        fb.localTee(d);
        this.expr(a[1]!);
        this.expr(a[2]!);
        fb.op(Op.i32_wrap_i64);
        if (name === "memset") fb.prefix(PrefixOp.memory_fill).u32(0);
        else fb.prefix(PrefixOp.memory_copy).u32(0).u32(0);
        fb.localGet(d);
        return;
      }
      case "__builtin_popcount":
      case "__builtin_clz":
      case "__builtin_ctz":
        one();
        fb.op(
          name.endsWith("popcount")
            ? Op.i32_popcnt
            : name.endsWith("clz")
              ? Op.i32_clz
              : Op.i32_ctz,
        );
        return;
      case "__builtin_popcountl":
      case "__builtin_popcountll":
      case "__builtin_clzl":
      case "__builtin_clzll":
      case "__builtin_ctzl":
      case "__builtin_ctzll":
        one();
        fb.op(
          name.includes("popcount")
            ? Op.i64_popcnt
            : name.includes("clz")
              ? Op.i64_clz
              : Op.i64_ctz,
        );
        fb.op(Op.i32_wrap_i64);
        return;
      case "__memory_size":
        fb.op(0x3f).u32(0);
        return;
      case "__memory_grow":
        one();
        fb.op(0x40).u32(0);
        return;
      case "assert":
        one();
        fb.op(Op.i32_eqz).blockOp(Op.if);
        this.trap(TrapCode.assertion, n);
        fb.op(Op.end);
        return;
      case "exit":
        fb.i32(TrapCode.exit);
        one();
        fb.i32(0);
        this.callHost("trap");
        return;
    }
    throw typeError(`unknown function '${name}'`, n);
  }
}

/** A stand-in operand meaning "the value is already on the stack". */
const PUSHED: Node = { kind: "null", line: 0, col: 0 };

export type { Var };
