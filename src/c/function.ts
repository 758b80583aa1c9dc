// Code generation for one C function: statements and expressions into a wasm function body.
// Scalars whose address is never taken live in wasm locals; arrays, structs and address-taken
// locals live in a shadow-stack frame in linear memory. Loops and calls are metered; division,
// signed overflow, null pointers and recursion are checked.
import {
  callDepthCap,
  ENTRY_VALUE_ADDR,
  FUNCTION_TABLE,
  GLOBAL_DEPTH,
  GLOBAL_FUEL,
  GLOBAL_SP,
  HOST_FRAME_ADDR,
  HOST_TABLE,
  leavesValueInMemory,
  OVERFLOW_OPS,
  overflowTrap,
  TrapCode,
  userSig,
} from "./abi.js";
import {
  forEachChild,
  LARGE_LOCAL_BYTES,
  newNode,
  statementsIn,
  type AssignNode,
  type BinaryNode,
  type CallNode,
  type CaseNode,
  type DeclNode,
  type Expr,
  type ForNode,
  type Func,
  type IncDecNode,
  type Initializer,
  type Node,
  type OpAssignNode,
  type Stmt,
  type Var,
  type SwitchNode,
} from "./ast.js";
import type { CodegenOptions, CompiledModule } from "./codegen.js";
import { CompileError, typeError, type Pos } from "./errors.js";
import { floatValue, intValue } from "./fold.js";
import type { BridgeLayout } from "./host-bridge.js";
import { INLINE_FUNCTIONS } from "./library.js";
import {
  countedIncrementInRange,
  countedLoop,
  countedStart,
  LOCAL_FUEL_BATCH,
  weight,
  type LoopNest,
  type CountedLoop,
} from "./metering.js";
import { peelableBaseCase, type BaseCase } from "./base-case.js";
import { addressRange, alwaysReturns, checksProvenByGuard, integerConstant } from "./ranges.js";
import { keepShape } from "./shapes.js";
import { funcType, isAggregate, T, valType, varargSlots, type Type, typeName } from "./types.js";
import { FuncBuilder, Op, PrefixOp, releaseWriter, TypeTable, type ValType } from "./wasm.js";

export interface ModuleContext {
  recursive: Set<string>;
  opts: CodegenOptions;
  types: TypeTable;
  importIndex: Map<string, number>;
  /** Names callers use; a function that may recurse is called there through its wrapper. */
  funcIndex: Map<string, number>;
  /** Functions that may recurse: the index of the body that takes and returns fuel and depth. */
  meteredIndex: Map<string, number>;
  imports: CompiledModule["imports"];
  bridge: BridgeLayout;
  /** The loop nests of the functions generated so far (predicts a long run). */
  loops: LoopNest;
}

/** Wasm block labels: loop/switch targets, plain blocks, and `dispatch:n`, the loop at the top
 * of a C block with labels that every goto into that block branches back to. */
type Label = "break" | "continue" | "other" | `dispatch:${number}`;

/** A C block that contains labels (at any depth): its dispatch loop and those labels. */
interface Dispatch {
  id: number;
  labels: Set<number>;
}

/** The wasm type a variadic argument is held in before it is stored to its slot. */
function varargValType(ty: Type): ValType {
  return valType(ty.kind === "array" || ty.kind === "func" ? T.uint : ty);
}

/** An integer constant expression's value as a `bits`-bit signed operand, if it is one. */
function constantIn(bits: 32 | 64, e: Expr): bigint | undefined {
  const c = integerConstant(e);
  return c === undefined ? undefined : BigInt.asIntN(bits, c);
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
      walk(newNode("block", e, { body: e.body }), e);
      return;
    }
    forEachChild(e, expressions);
  };
  const walk = (n: Node, key: Node = n): Set<number> => {
    const found = new Set<number>();
    if (n.kind === "exprstmt" || n.kind === "return") expressions(n.lhs);
    if (n.kind === "label") found.add(number.get(n.label)!);
    if (n.kind === "case" && caseNumber.has(n)) found.add(caseNumber.get(n)!);
    for (const k of statementsIn(n)) for (const l of walk(k)) found.add(l);
    if (found.size > 0) within.set(key, found);
    return found;
  };
  walk(body);
  return within;
}

/** Trips charged at most for one counted loop: more than any instruction limit allows, and
 * small enough that trips * weight (at most 1000) fits in an i64. */
const COUNTED_TRIPS_CAP = 1n << 40n;

/** Opcodes of C's binary operators per wasm type, [signed, unsigned]: built once per process,
 * not per expression. An operator missing for a type (e.g. `%` on doubles) is a type error. */
const BINARY_OPCODES: Record<
  ValType,
  readonly [Readonly<Record<string, number>>, Readonly<Record<string, number>>]
> = (() => {
  const opcode = (name: string): number => {
    const code = (Op as Record<string, number>)[name];
    if (code === undefined) throw new Error(`no wasm opcode ${name}`);
    return code;
  };
  const int = (w: "i32" | "i64", unsigned: boolean): Record<string, number> => {
    const o = (name: string): number => opcode(`${w}_${name}`);
    const su = (name: string): number => o(`${name}_${unsigned ? "u" : "s"}`);
    return {
      "+": o("add"),
      "-": o("sub"),
      "*": o("mul"),
      "/": su("div"),
      "%": su("rem"),
      "<<": o("shl"),
      ">>": su("shr"),
      "&": o("and"),
      "|": o("or"),
      "^": o("xor"),
      "==": o("eq"),
      "!=": o("ne"),
      "<": su("lt"),
      "<=": su("le"),
      ">": su("gt"),
      ">=": su("ge"),
    };
  };
  const float = (w: "f32" | "f64"): Record<string, number> => {
    const o = (name: string): number => opcode(`${w}_${name}`);
    const ops = { "+": o("add"), "-": o("sub"), "*": o("mul"), "/": o("div") };
    const cmp = {
      "==": o("eq"),
      "!=": o("ne"),
      "<": o("lt"),
      "<=": o("le"),
      ">": o("gt"),
      ">=": o("ge"),
    };
    return { ...ops, ...cmp };
  };
  return {
    i32: [int("i32", false), int("i32", true)],
    i64: [int("i64", false), int("i64", true)],
    f32: [float("f32"), float("f32")],
    f64: [float("f64"), float("f64")],
  };
})();

/** The empty table of every generator that has nothing to put in one (most functions have no
 * labels, big arrays or counted loops): shared, never written. A generator takes its own
 * (`owned`) before its first write: a dozen fresh maps per function were a fifth of what code
 * generation allocated per block. */
const NONE = new Map<never, never>();
const NONE_SET = new Set<never>();

function owned<K, V>(m: Map<K, V>): Map<K, V> {
  return m === NONE ? new Map<K, V>() : m;
}

export class FunctionGenerator {
  private fb: FuncBuilder;
  private readonly localOf = new Map<number, number>();
  private frameOffset: Map<number, number> = NONE;
  /** Big local arrays: the wasm local holding their heap address. */
  private heapOf: Map<number, number> = NONE;
  /** Variable-length arrays (their address local is in heapOf, but they live on the stack). */
  private vlas: Set<number> = NONE_SET;
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
  /** The function may recurse: its fuel and the calls it may still nest (maxCallDepth - 1 -
   * its depth) arrive as the two parameters after the C ones (see meteredSig), and the fuel
   * left is returned after its result. */
  private readonly metered: boolean;
  private readonly fuelParam: number;
  private readonly callsLeftParam: number;
  /** This function's base case when its calls of itself can test it first (base-case.ts). */
  private readonly baseCase: BaseCase | null;
  private ret = -1;
  private labels: Label[] = [];
  private readonly dispatches: Dispatch[] = [];
  private dispatchCount = 0;
  /** Labels of this function, numbered from 1; the statements holding them; and the local
   * holding the label a goto is on its way to (0 while no goto is in flight). */
  private labelNumber: Map<string, number> = NONE;
  private labelsIn: Map<Node, Set<number>> = NONE;
  private caseNumber: Map<Node, number> = NONE;
  private gotoTarget = -1;
  /** Bounds of counted loops' variables, inside those loops' bodies (see countedStart). */
  private lowerBounds: Map<Var, bigint> = NONE;
  private upperBounds: Map<Var, bigint> = NONE;
  /** Checked operations proven to stay in range (a counted loop's `i++`, see countedIncrement). */
  private readonly cannotOverflow = new Set<object>();
  /** Scratch locals of the overflow checks (used only between an operation and its check). */
  private readonly scratch = new Map<string, number>();

  constructor(
    private readonly ctx: ModuleContext,
    private readonly f: Func,
  ) {
    this.paramBase = isAggregate(f.ty.ret!) ? 1 : 0;
    const wasmParams = f.params.length + this.paramBase + (f.ty.variadic ? 1 : 0);
    this.metered = ctx.recursive.has(f.name);
    this.fuelParam = this.metered ? wasmParams : -1;
    this.callsLeftParam = this.metered ? wasmParams + 1 : -1;
    this.baseCase = this.metered ? peelableBaseCase(f) : null;
    this.fb = new FuncBuilder(wasmParams + (this.metered ? 2 : 0));
    // A trap ends the run: the host counts the fuel burnt from the global.
    if (this.metered)
      this.fb.beforeTrap = () => this.fb.localGet(this.fuelParam).globalSet(GLOBAL_FUEL);
  }

  generate(): FuncBuilder {
    const f = this.f;
    const fb = this.fb;
    const fnBody = f.body;
    // Only defined functions reach the code generator.
    if (!fnBody) throw new Error(`function '${f.name}' has no body`);
    // Plain loops rather than callbacks here and below: see encodeModule in wasm.ts.
    for (let i = 0; i < f.params.length; i++) {
      const p = f.params[i]!;
      if (!p.inMemory) this.localOf.set(p.id, i + this.paramBase);
    }
    if (f.varargs) this.localOf.set(f.varargs.id, f.params.length + this.paramBase);
    for (const v of f.params) this.place(v);
    for (const v of f.locals) this.place(v);
    this.frameSize = Math.ceil(this.frameSize / 8) * 8;
    this.varargOffset = this.frameSize;
    this.varargBytes = (f.varargSlots ?? 0) * 8;
    this.fp = fb.addLocal("i32");
    if (f.hasVla) this.spSave = fb.addLocal("i32");
    const retTy = f.ty.ret!;
    if (retTy.kind !== "void") this.ret = fb.addLocal(valType(retTy));

    for (const name of f.labels ?? [])
      (this.labelNumber = owned(this.labelNumber)).set(name, this.labelNumber.size + 1);
    for (const sw of f.switches ?? [])
      if (FunctionGenerator.nestedCases(sw).length > 0)
        for (const c of sw.cases)
          (this.caseNumber = owned(this.caseNumber)).set(
            c.node,
            this.labelNumber.size + this.caseNumber.size + 1,
          );
    if (this.labelNumber.size + this.caseNumber.size > 0) {
      this.labelsIn = labelsWithin(fnBody, this.labelNumber, this.caseNumber);
      this.gotoTarget = fb.addLocal("i32");
    }
    // Body first (it decides the vararg area), then the prologue in front of it.
    this.labels.push("other");
    fb.blockOp(Op.block);
    this.stmt(fnBody);
    fb.op(Op.end);
    this.labels.pop();
    const body = fb.takeCode();
    const bodyPositions = fb.positions;
    const bodyTraps = fb.trapCodes;
    fb.positions = [];
    fb.trapCodes = [];
    fb.at(f);

    const frame = this.frameSize + this.varargBytes + this.tempBytes;
    // Only functions on a call cycle can recurse without bound (loops are metered on their
    // own): each call burns a unit of fuel, and the call depth is bounded, a clean "stack
    // overflow" long before the host stack is at risk. Both counters are parameters
    // (registers) and count down. The host never hands out more fuel than the calls still
    // allowed to nest (fuelWithinDepth), so the depth is tested only when the fuel runs out:
    // one test per call.
    if (this.metered) {
      fb.localGet(this.fuelParam).i32(1).op(Op.i32_sub).localTee(this.fuelParam);
      fb.i32(0).op(Op.i32_lt_s).blockOp(Op.if);
      fb.localGet(this.callsLeftParam).i32(0).op(Op.i32_lt_s).blockOp(Op.if);
      this.trap(TrapCode.callDepth, f);
      fb.op(Op.end);
      this.callHost("refuel");
      fb.op(Op.end);
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
      fb.i64(BigInt(v.ty.size));
      this.callOut(this.ctx.funcIndex.get("malloc")!);
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
      if (!this.vlas.has(id)) {
        fb.localGet(local);
        this.callOut(this.ctx.funcIndex.get("free")!);
      }
    if (this.spSave >= 0) fb.localGet(this.spSave).globalSet(GLOBAL_SP);
    if (frame > 0) fb.localGet(this.fp).i32(frame).op(Op.i32_add).globalSet(GLOBAL_SP);
    if (this.ret >= 0 && leavesValueInMemory(f)) {
      fb.i32(0).localGet(this.ret);
      this.store(f.ty.ret!, ENTRY_VALUE_ADDR);
    } else if (this.ret >= 0) fb.localGet(this.ret);
    if (this.metered) fb.localGet(this.fuelParam);
    return fb;
  }

  /** Gives a parameter or local its home: a heap block (big arrays, VLAs), a frame slot
   * (address taken, arrays, structs) or a wasm local. */
  private place(v: Var): void {
    const fb = this.fb;
    if (v.ty.vlaCount) {
      (this.heapOf = owned(this.heapOf)).set(v.id, fb.addLocal("i32"));
      if (this.vlas === NONE_SET) this.vlas = new Set();
      this.vlas.add(v.id);
    } else if (v.inMemory && !v.isParam && v.ty.size > LARGE_LOCAL_BYTES) {
      (this.heapOf = owned(this.heapOf)).set(v.id, fb.addLocal("i32"));
    } else if (v.inMemory) {
      const align = Math.max(v.ty.align, 4);
      this.frameSize = Math.ceil(this.frameSize / align) * align;
      (this.frameOffset = owned(this.frameOffset)).set(v.id, this.frameSize);
      this.frameSize += Math.max(v.ty.size, 1);
    } else if (!v.isParam && v !== this.f.varargs)
      this.localOf.set(v.id, fb.addLocal(valType(v.ty)));
  }

  // ---- helpers ----
  private tmp(t: ValType): number {
    return this.fb.addLocal(t);
  }
  /** An `unreachable` the host maps back to `code` and `at` (see FuncBuilder.trapHere), not a
   * call: Node 20's V8 keeps a few dozen bytes for every signature every module declares, for
   * good (docs/c-vm.md, memory), and a host call would add the trap's signature. */
  private trap(code: number, at: { line: number; col: number }): void {
    this.fb.at(at).trapHere(code);
  }
  /** Calls a core or host library function through the host bridge's table. A host library
   * function's arguments (on the wasm stack) go to the frame at HOST_FRAME_ADDR, and its
   * result comes back from there. */
  private callHost(name: string): void {
    const { entries, slots } = this.ctx.bridge;
    const slot = slots.get(name)!;
    const { sig, frame } = entries[slot]!;
    const fb = this.fb;
    if (frame) {
      const held: number[] = [];
      for (let k = 0; k < frame.params.length; k++) {
        const t = frame.params[k]!;
        held.push(this.scratchLocal(`frame${k}${t}`, t));
      }
      for (let k = held.length - 1; k >= 0; k--) fb.localSet(held[k]!);
      for (let k = 0; k < held.length; k++) {
        fb.i32(0).localGet(held[k]!);
        const f64 = frame.params[k] === "f64";
        fb.mem(f64 ? Op.f64_store : Op.i32_store, f64 ? 3 : 2, HOST_FRAME_ADDR + 8 * k);
      }
    }
    // The host runs no C code: only the fuel goes through the global, and the depth for
    // refuel, which hands out no more fuel than the calls still allowed (fuelWithinDepth).
    this.leaveMetered(name === "refuel");
    fb.i32(slot).callIndirect(this.ctx.types.indexOf(sig), HOST_TABLE);
    this.enterMetered();
    const result = frame?.results[0];
    if (result === "f64") fb.i32(0).mem(Op.f64_load, 3, HOST_FRAME_ADDR);
    else if (result) fb.i32(0).mem(Op.i32_load, 2, HOST_FRAME_ADDR);
  }
  /** Calls a module function or import with the C signature (args on the stack). */
  private callOut(index: number): void {
    this.leaveMetered(true);
    this.fb.call(index);
    this.enterMetered();
  }
  /** Before a metered function calls anything but a metered body: the fuel left goes to its
   * global, and the depth too where C code (through a wrapper) may run. */
  private leaveMetered(depth: boolean): void {
    if (!this.metered) return;
    const fb = this.fb;
    fb.localGet(this.fuelParam).globalSet(GLOBAL_FUEL);
    if (depth)
      fb.i32(callDepthCap(this.ctx.opts.maxCallDepth))
        .localGet(this.callsLeftParam)
        .op(Op.i32_sub)
        .globalSet(GLOBAL_DEPTH);
  }
  /** After such a call: the fuel left comes back from the global. */
  private enterMetered(): void {
    if (this.metered) this.fb.globalGet(GLOBAL_FUEL).localSet(this.fuelParam);
  }
  /** Pushes the fuel left (in a metered function a parameter, elsewhere the global). */
  private fuelGet(): void {
    if (this.metered) this.fb.localGet(this.fuelParam);
    else this.fb.globalGet(GLOBAL_FUEL);
  }
  private fuelSet(): void {
    if (this.metered) this.fb.localSet(this.fuelParam);
    else this.fb.globalSet(GLOBAL_FUEL);
  }
  private scratchLocal(name: string, t: ValType): number {
    let idx = this.scratch.get(name);
    if (idx === undefined) {
      idx = this.fb.addLocal(t);
      this.scratch.set(name, idx);
    }
    return idx;
  }
  /** Marks the checks that a branch's condition proves cannot fail (see ranges.ts). */
  private proveByGuard(cond: Expr, then: Node, els: Node | undefined | null): void {
    if (this.gotoTarget >= 0) return;
    for (const c of checksProvenByGuard(cond, true, then)) this.cannotOverflow.add(c);
    if (els) for (const c of checksProvenByGuard(cond, false, els)) this.cannotOverflow.add(c);
  }
  /** Whether a node's signed arithmetic must trap on overflow. */
  private checks(n: { checked?: boolean }): boolean {
    return !!n.checked && !this.ctx.opts.wrapv && !this.cannotOverflow.has(n);
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
  /** With [a] on the stack, pushes a + c for a signed constant c and traps if it overflows: one
   * compare against the bound c leaves room for (no 64-bit widening). Returns false, emitting
   * nothing, when -c was not representable (`x - INT_MIN`); the caller checks the general way. */
  private checkedAddConst(v: "i32" | "i64", c: bigint, at: Node, trapOp: "+" | "-"): boolean {
    const bits = v === "i32" ? 32 : 64;
    if (BigInt.asIntN(bits, c) !== c) return false;
    const fb = this.fb;
    if (c === 0n) return true;
    const max = (1n << BigInt(bits - 1)) - 1n;
    const a = this.scratchLocal(v === "i32" ? "i32b" : "i64a", v);
    fb.localTee(a);
    this.constOf(bits, c > 0n ? max - c : -max - 1n - c);
    if (v === "i32") fb.op(c > 0n ? Op.i32_gt_s : Op.i32_lt_s);
    else fb.op(c > 0n ? Op.i64_gt_s : Op.i64_lt_s);
    fb.blockOp(Op.if);
    fb.at(at).trapHere(overflowTrap(trapOp, v === "i64"));
    fb.op(Op.end).localGet(a);
    this.constOf(bits, c).op(v === "i32" ? Op.i32_add : Op.i64_add);
    return true;
  }
  /** With [a] on the stack, pushes a * c for a signed constant c (|c| >= 2) and traps if it
   * overflows: a is in range exactly when it lies between the bounds c leaves room for, one
   * unsigned compare of its distance from the lower one. Returns false, emitting nothing, for
   * other constants; the caller checks the general way. */
  private checkedMulConst(v: "i32" | "i64", c: bigint, at: Node): boolean {
    if (c > -2n && c < 2n) return false;
    const bits = v === "i32" ? 32 : 64;
    const max = (1n << BigInt(bits - 1)) - 1n;
    const min = -max - 1n;
    const floorDiv = (x: bigint, d: bigint): bigint => {
      const q = x / d;
      return q * d !== x && x < 0n !== d < 0n ? q - 1n : q;
    };
    const ceilDiv = (x: bigint, d: bigint): bigint => -floorDiv(-x, d);
    const [low, high] =
      c > 0n ? [ceilDiv(min, c), floorDiv(max, c)] : [ceilDiv(max, c), floorDiv(min, c)];
    const fb = this.fb;
    const a = this.scratchLocal(v === "i32" ? "i32b" : "i64a", v);
    fb.localTee(a);
    this.constOf(bits, low);
    fb.op(v === "i32" ? Op.i32_sub : Op.i64_sub);
    this.constOf(bits, BigInt.asIntN(bits, high - low));
    fb.op(v === "i32" ? Op.i32_gt_u : Op.i64_gt_u).blockOp(Op.if);
    fb.at(at).trapHere(overflowTrap("*", v === "i64"));
    fb.op(Op.end).localGet(a);
    this.constOf(bits, c).op(v === "i32" ? Op.i32_mul : Op.i64_mul);
    return true;
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
    this.fuelGet();
    fb.i32(0).op(Op.i32_lt_s).blockOp(Op.if);
    this.callHost("refuel");
    fb.op(Op.end);
    fb.op(Op.end);
  }
  /** Widens the i32 on the stack (of C type `ty`) to i64; an i64 stays as it is. */
  private widenToI64(ty: Type): void {
    if (valType(ty) === "i32") this.fb.op(ty.unsigned ? Op.i64_extend_i32_u : Op.i64_extend_i32_s);
  }

  /** Charges a counted loop's whole cost once, before it starts (see countedLoop): into the
   * local counter at most 2^30 units at a time, settling with the shared tank (and refuelling,
   * which stops a program over its limit) whenever the counter passes LOCAL_FUEL_BATCH. A big
   * cost takes a few rounds of this loop instead of a host call of its own, whose signature
   * every such module would declare (see trap()). */
  private chargeCountedLoop(c: CountedLoop, w: number): void {
    const fb = this.fb;
    const t = this.tmp("i64");
    const bound = this.tmp("i64");
    // Trips: 0 unless bound > i (>= when inclusive); else the difference, exact as an unsigned
    // 64-bit number, capped so that neither + 1 nor the product with w can wrap (a wrapped count
    // would let the loop run unmetered), then divided by the step rounding up.
    this.expr(c.bound);
    this.widenToI64(c.bound.ty);
    fb.localTee(bound).localGet(this.localOf.get(c.v.id)!);
    this.widenToI64(c.v.ty);
    const unsigned = c.unsigned64;
    if (c.inclusive) fb.op(unsigned ? Op.i64_ge_u : Op.i64_ge_s);
    else fb.op(unsigned ? Op.i64_gt_u : Op.i64_gt_s);
    fb.blockOp(Op.if, "i64");
    fb.localGet(bound).localGet(this.localOf.get(c.v.id)!);
    this.widenToI64(c.v.ty);
    fb.op(Op.i64_sub).localTee(t).i64(COUNTED_TRIPS_CAP).op(Op.i64_gt_u).blockOp(Op.if, "i64");
    fb.i64(COUNTED_TRIPS_CAP);
    fb.op(Op.else).localGet(t);
    if (c.inclusive) fb.i64(1n).op(Op.i64_add);
    if (c.stepVar || c.step > 1) {
      // (t - 1) / step + 1 for t >= 1: rounded up, with no sum that could wrap.
      fb.localTee(t).op(Op.i64_eqz).blockOp(Op.if, "i64").i64(0n).op(Op.else).localGet(t);
      fb.i64(1n).op(Op.i64_sub);
      if (c.stepVar) {
        fb.localGet(this.localOf.get(c.stepVar.id)!);
        this.widenToI64(c.stepVar.ty);
      } else fb.i64(BigInt(c.step));
      fb.op(Op.i64_div_u).i64(1n).op(Op.i64_add).op(Op.end);
    }
    fb.op(Op.end);
    fb.op(Op.else).i64(0n).op(Op.end);
    fb.i64(BigInt(w)).op(Op.i64_mul).localSet(t);
    if (this.fuelLocal < 0) this.fuelLocal = fb.addLocal("i32");
    const m = this.fuelLocal;
    const round = 1n << 30n;
    fb.blockOp(Op.loop);
    fb.localGet(m);
    fb.localGet(t).i64(round).op(Op.i64_gt_s).blockOp(Op.if, "i32");
    fb.localGet(t).i64(round).op(Op.i64_sub).localSet(t).i32(Number(round));
    fb.op(Op.else);
    fb.localGet(t).op(Op.i32_wrap_i64).i64(0n).localSet(t);
    fb.op(Op.end);
    fb.op(Op.i32_add).localTee(m).i32(LOCAL_FUEL_BATCH).op(Op.i32_gt_s).blockOp(Op.if);
    this.settleFuel();
    this.fuelGet();
    fb.i32(0).op(Op.i32_lt_s).blockOp(Op.if);
    this.callHost("refuel");
    fb.op(Op.end);
    fb.op(Op.end);
    fb.localGet(t).i64(0n).op(Op.i64_gt_s).brIf(0);
    fb.op(Op.end);
  }

  private settleFuel(): void {
    const m = this.fuelLocal;
    this.fuelGet();
    this.fb.localGet(m).op(Op.i32_sub);
    this.fuelSet();
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
  private addrParts(n: Expr, access = true): number {
    const fb = this.fb;
    switch (n.kind) {
      case "var": {
        const v = n.v;
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
        const p = n.lhs;
        // Fold constant index: p[3] → load offset 12.
        if (p.kind === "binary" && p.op === "+" && p.rhs.kind === "num" && p.ty.kind === "ptr") {
          const c = Number(BigInt.asIntN(32, intValue(p.rhs)));
          if (c >= 0 && c < 1 << 20) {
            this.expr(p.lhs);
            if (access && !this.aboveNullGuard(p.lhs)) this.nullCheck(n);
            return c;
          }
        }
        this.expr(p);
        if (access && !this.aboveNullGuard(p)) this.nullCheck(n);
        return 0;
      }
      case "member":
        return this.addrParts(n.lhs, access) + n.member.offset;
      case "str":
        fb.i32(n.addr);
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
  /** Whether an address is proven outside the null guard (a global array indexed by loop
   * variables with constant bounds: `a[i][k]` in matmul's loops). */
  private aboveNullGuard(p: Expr): boolean {
    if (this.upperBounds.size === 0) return false;
    const r = addressRange(p, { low: this.lowerBounds, high: this.upperBounds });
    return !!r && r[0] >= BigInt(this.ctx.opts.nullGuard ?? 0) && r[1] < 1n << 32n;
  }
  /** With an address on the stack, traps if it points into the null guard (NULL, or a small
   * offset from it: `p->next` of a NULL p). The C library's code is exempt (see Func.library). */
  private nullCheck(at: Pos): void {
    const guard = this.ctx.opts.nullGuard ?? 0;
    if (guard === 0 || this.f.library) return;
    const fb = this.fb;
    const p = this.scratchLocal("nullp", "i32");
    fb.localTee(p).i32(guard).op(Op.i32_lt_u).blockOp(Op.if);
    fb.at(at).trapHere(TrapCode.nullPointer);
    fb.op(Op.end).localGet(p);
  }
  private addr(n: Expr, access = false): void {
    const off = this.addrParts(n, access);
    if (off) this.fb.i32(off).op(Op.i32_add);
  }
  private isRegister(n: Expr): boolean {
    return n.kind === "var" && !n.v.global && !n.v.inMemory;
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
  private cond(n: Expr): void {
    this.expr(n);
    this.truthy(n.ty);
  }

  // ---- statements ----
  private stmt(n: Stmt): void {
    const fb = this.fb;
    switch (n.kind) {
      case "block":
        this.blockWithLabels(n, n.body);
        return;
      case "label":
        // Arrived: a goto's journey down the statements on its label's path ends here.
        fb.i32(0).localSet(this.gotoTarget);
        this.stmt(n.then);
        return;
      case "goto": {
        const label = this.labelNumber.get(n.label)!;
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
        this.discard(n.lhs);
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
          const thenLabels = this.labelsIn.get(n.then);
          fb.localGet(this.gotoTarget).op(Op.i32_eqz).blockOp(Op.if, "i32");
          this.bool(n.cond);
          fb.op(Op.else);
          this.isOneOf(thenLabels);
          fb.op(Op.end);
        } else this.cond(n.cond);
        this.proveByGuard(n.cond, n.then, n.els);
        fb.blockOp(Op.if);
        this.labels.push("other");
        this.stmt(n.then);
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
        const counted = entered ? null : countedLoop(n, (v) => this.lowerBounds.get(v));
        this.fb.at(n);
        if (counted) this.chargeCountedLoop(counted, w);
        const incInRange = !!counted && !!n.inc && countedIncrementInRange(n, counted);
        if (incInRange) this.cannotOverflow.add(n.inc!);
        // The body knows i >= its start if i cannot wrap (checked, or proven in range).
        const start =
          counted && (incInRange || !this.ctx.opts.wrapv) ? countedStart(n, counted) : undefined;
        const outerBound = counted ? this.lowerBounds.get(counted.v) : undefined;
        if (start !== undefined)
          (this.lowerBounds = owned(this.lowerBounds)).set(counted!.v, start);
        // In the body, i < bound held and the body never assigns i.
        const last =
          counted && counted.bound.kind === "num" && counted.bound.ival !== undefined
            ? counted.bound.ival - (counted.inclusive ? 0n : 1n)
            : undefined;
        const outerLast = counted ? this.upperBounds.get(counted.v) : undefined;
        if (last !== undefined) (this.upperBounds = owned(this.upperBounds)).set(counted!.v, last);
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
        const outerNest = this.ctx.loops.enter(n);
        this.stmt(n.then);
        this.ctx.loops.leave(outerNest);
        fb.op(Op.end);
        this.labels.pop();
        if (start !== undefined) restore(this.lowerBounds, counted!.v, outerBound);
        if (last !== undefined) restore(this.upperBounds, counted!.v, outerLast);
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
        const outerNest = this.ctx.loops.enter(n);
        this.stmt(n.then);
        this.ctx.loops.leave(outerNest);
        fb.op(Op.end);
        this.labels.pop();
        this.fb.at(n);
        this.meterLoop(weight(n.then) + weight(n.cond));
        this.cond(n.cond);
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
        this.stmt(n.then);
        return;
      case "break":
        fb.br(this.depthOf("break"));
        return;
      case "continue":
        fb.br(this.depthOf("continue"));
        return;
      default: {
        const never: never = n;
        throw new Error(`unexpected statement ${(never as Stmt).kind}`);
      }
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
  private blockWithLabels(block: Node, stmts: Stmt[]): void {
    const fb = this.fb;
    const inside = this.labelsIn.get(block);
    const entries: number[] = [];
    for (let i = 0; i < stmts.length; i++) if (this.labelsIn.has(stmts[i]!)) entries.push(i);
    if (!inside || entries.length === 0) {
      for (let i = 0; i < stmts.length; i++) {
        const s = stmts[i]!;
        // After `if (n < 2) return n;` the rest of the block knows n >= 2.
        if (s.kind === "if" && !s.els && this.gotoTarget < 0 && alwaysReturns(s.then))
          for (const c of checksProvenByGuard(s.cond, false, stmts, i + 1))
            this.cannotOverflow.add(c);
        this.stmt(s);
      }
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
  private static nestedCases(n: SwitchNode): CaseNode[] {
    const items = n.then.kind === "block" ? n.then.body : [n.then];
    const top = new Set<Node>();
    for (let s of items) while (s.kind === "case") (top.add(s), (s = s.then));
    return n.cases.map((c) => c.node).filter((c) => !top.has(c));
  }

  /** A switch with nested cases: pick the case's label number, then run the body, whose
   * dispatch loops enter the statements on that case's path. */
  private generalSwitch(n: SwitchNode, sel: number): void {
    const fb = this.fb;
    const is64 = valType(n.cond.ty) === "i64";
    fb.blockOp(Op.block);
    this.labels.push("break");
    fb.blockOp(Op.block);
    this.labels.push("other");
    let fallback = -1;
    for (const c of n.cases) {
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
    this.stmt(n.then);
    fb.op(Op.end);
    this.labels.pop();
  }

  private switchStmt(n: SwitchNode): void {
    const fb = this.fb;
    const sel = this.tmp(valType(n.cond.ty));
    this.expr(n.cond);
    fb.localSet(sel);
    const first = n.cases[0];
    if (first && this.caseNumber.has(first.node)) {
      this.generalSwitch(n, sel);
      return;
    }
    // Split the body into segments, each starting at a run of case labels.
    const items = n.then.kind === "block" ? n.then.body : [n.then];
    const segments: { values: (bigint | null)[]; stmts: Stmt[] }[] = [];
    for (const item of items) {
      let s: Stmt = item;
      if (s.kind === "case") {
        const values: (bigint | null)[] = [];
        while (s.kind === "case") {
          values.push(s.caseValue);
          s = s.then;
        }
        segments.push({ values, stmts: [s] });
      } else if (segments.length > 0) segments[segments.length - 1]!.stmts.push(s);
      // statements before the first label can never run
    }
    const k = segments.length;
    const is64 = valType(n.cond.ty) === "i64";
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

  private decl(n: DeclNode): void {
    const v = n.v;
    const init = n.initializer;
    const fb = this.fb;
    if (v.ty.vlaCount && n.rhs) {
      // Carve the array out of the shadow stack; the function restores sp when it returns.
      const count = this.localOf.get(v.ty.vlaCount.id)!;
      const addr = this.heapOf.get(v.id)!;
      this.expr(n.rhs);
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
      // A register local is a scalar: its initializer is an expression.
      if (init?.expr) {
        this.expr(init.expr);
        fb.localSet(this.localOf.get(v.id)!);
      }
      return;
    }
    if (!init) return;
    if (isAggregate(v.ty) || v.ty.kind === "array") {
      if (init.expr) {
        // struct copy: s = other
        this.addr(n.lhs);
        this.expr(init.expr);
        fb.i32(v.ty.size).prefix(PrefixOp.memory_copy).u32(0).u32(0);
        return;
      }
      this.addr(n.lhs);
      fb.i32(0).i32(v.ty.size).prefix(PrefixOp.memory_fill).u32(0);
    }
    this.initStore(n.lhs, init, 0);
  }

  private initStore(target: Expr, init: Initializer, offset: number): void {
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
      this.expr(init.expr);
      fb.i32(init.ty.size).prefix(PrefixOp.memory_copy).u32(0).u32(0);
      return;
    }
    const base = this.addrParts(target);
    this.expr(init.expr);
    this.storeLvalue(init.ty, base + offset);
  }

  // ---- expressions ----
  /** Evaluates for side effects only. */
  private discard(n: Expr): void {
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
        this.discard(n.lhs);
        this.discard(n.rhs);
        return;
      case "cast":
        if (n.ty.kind === "void") {
          this.discard(n.lhs);
          return;
        }
        break;
    }
    this.expr(n);
    if (n.ty.kind !== "void") this.fb.op(Op.drop);
  }

  private expr(n: Expr): void {
    const fb = this.fb;
    if (n.line > 0) fb.at(n);
    switch (n.kind) {
      case "num": {
        const t = n.ty;
        switch (valType(t)) {
          case "i32":
            fb.i32(Number(BigInt.asIntN(32, intValue(n))));
            break;
          case "i64":
            fb.i64(intValue(n));
            break;
          case "f32":
            fb.f32(floatValue(n));
            break;
          case "f64":
            fb.f64(floatValue(n));
            break;
        }
        return;
      }
      case "str":
        fb.i32(n.addr);
        return;
      case "var": {
        if (this.isRegister(n)) {
          fb.localGet(this.localOf.get(n.v.id)!);
          return;
        }
        const off = this.addrParts(n);
        this.load(n.ty, off);
        return;
      }
      case "funcref": {
        const name = n.callee;
        if (!this.ctx.opts.funcs.get(name)?.body && !this.ctx.funcIndex.has(name))
          throw typeError(`cannot take the address of library function '${name}'`, n);
        fb.i32(this.ctx.opts.slotOf(name));
        return;
      }
      case "deref":
      case "member": {
        // A[i] of an array of arrays is only an address (no access): the element access that
        // follows checks the address it computes from it.
        const off = this.addrParts(n, !(n.kind === "deref" && n.ty.kind === "array"));
        fb.at(n);
        this.loadLvalue(n.ty, off);
        return;
      }
      case "addr":
        this.addr(n.lhs);
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
        this.discard(n.lhs);
        this.expr(n.rhs);
        return;
      case "cast":
        if (n.ty.kind === "void") {
          this.discard(n.lhs);
          return;
        }
        this.expr(n.lhs);
        this.convert(
          n.lhs.ty.kind === "array" || n.lhs.ty.kind === "func" ? T.uint : n.lhs.ty,
          n.ty,
        );
        return;
      case "neg": {
        const t = n.ty;
        const v = valType(t);
        if (v === "i32") {
          fb.i32(0);
          this.expr(n.lhs);
          if (this.checks(n)) this.checkedArith("-", v, n, "unary -");
          else fb.op(Op.i32_sub);
        } else if (v === "i64") {
          fb.i64(0n);
          this.expr(n.lhs);
          if (this.checks(n)) this.checkedArith("-", v, n, "unary -");
          else fb.op(Op.i64_sub);
        } else {
          this.expr(n.lhs);
          fb.op(v === "f32" ? Op.f32_neg : Op.f64_neg);
        }
        return;
      }
      case "bitnot": {
        this.expr(n.lhs);
        if (valType(n.ty) === "i64") fb.i64(-1n).op(Op.i64_xor);
        else fb.i32(-1).op(Op.i32_xor);
        return;
      }
      case "not": {
        const t = n.lhs.ty;
        this.expr(n.lhs);
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
        this.cond(n.lhs);
        if (n.kind === "logand") {
          fb.blockOp(Op.if, "i32");
          this.labels.push("other");
          this.bool(n.rhs);
          fb.op(Op.else).i32(0).op(Op.end);
        } else {
          fb.blockOp(Op.if, "i32");
          this.labels.push("other");
          fb.i32(1).op(Op.else);
          this.bool(n.rhs);
          fb.op(Op.end);
        }
        this.labels.pop();
        return;
      }
      case "cond": {
        this.proveByGuard(n.cond, n.then, n.els);
        this.cond(n.cond);
        const t = n.ty;
        if (t.kind === "void") fb.blockOp(Op.if);
        else fb.blockOp(Op.if, valType(t));
        this.labels.push("other");
        if (t.kind === "void") this.discard(n.then);
        else this.expr(n.then);
        fb.op(Op.else);
        if (t.kind === "void") this.discard(n.els);
        else this.expr(n.els);
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
        const body = n.body;
        const last = body[body.length - 1];
        const valued = n.ty.kind !== "void" && last?.kind === "exprstmt";
        this.blockWithLabels(n, valued ? body.slice(0, -1) : body);
        if (valued) this.expr(last.lhs);
        return;
      }
      case "unresolved":
        // The parser turns every call of an undeclared name into a call or an error.
        throw typeError(`'${n.callee}' is not declared`, n);
      default: {
        const never: never = n;
        throw new Error(`unexpected expression ${(never as Expr).kind}`);
      }
    }
  }

  /** Pushes exactly 0 or 1. */
  private bool(n: Expr): void {
    const k = n.kind;
    if (k === "not" || k === "logand" || k === "logor") {
      this.expr(n);
      return;
    }
    if (k === "binary" && ["==", "!=", "<", "<=", ">", ">="].includes(n.op)) {
      this.expr(n);
      return;
    }
    this.cond(n);
    this.fb.i32(0).op(Op.i32_ne);
  }

  /** `lhsPushed`: the left operand is already on the stack (compound assignment). */
  private binary(n: BinaryNode, lhsPushed = false): void {
    const fb = this.fb;
    const op = n.op;
    const t = n.opTy ?? n.ty;
    const v = valType(t);
    const unsigned = !!t.unsigned || t.kind === "ptr";
    if (!lhsPushed) this.expr(n.lhs);
    if (
      (op === "+" || op === "-") &&
      (v === "i32" || v === "i64") &&
      this.checks(n) &&
      n.rhs.kind === "num" &&
      n.rhs.ival !== undefined
    ) {
      const c = BigInt.asIntN(v === "i32" ? 32 : 64, n.rhs.ival);
      if (this.checkedAddConst(v, op === "+" ? c : -c, n, op)) return;
      this.expr(n.rhs);
      this.checkedArith(op, v, n);
      return;
    }
    if (op === "*" && (v === "i32" || v === "i64") && this.checks(n)) {
      // By a constant: one range test of the other operand (a constant has no effects, so
      // `c * x` may evaluate x first).
      const bits = v === "i32" ? 32 : 64;
      const right = constantIn(bits, n.rhs);
      const left = right === undefined && !lhsPushed ? constantIn(bits, n.lhs) : undefined;
      if (right !== undefined && this.checkedMulConst(v, right, n)) return;
      if (left !== undefined && (left <= -2n || left >= 2n)) {
        fb.op(Op.drop);
        this.expr(n.rhs);
        this.checkedMulConst(v, left, n);
        return;
      }
    }
    if ((op === "/" || op === "%") && (v === "i32" || v === "i64")) {
      // An explicit check, so the error carries the operator's position.
      const d = this.tmp(v);
      this.expr(n.rhs);
      fb.localTee(d);
      fb.op(v === "i32" ? Op.i32_eqz : Op.i64_eqz).blockOp(Op.if);
      this.trap(TrapCode.divisionByZero, n);
      fb.op(Op.end).localGet(d);
    } else this.expr(n.rhs);
    const code = BINARY_OPCODES[v][unsigned ? 1 : 0][op];
    if (code === undefined)
      throw typeError(`operator '${op}' cannot be applied to '${typeName(t)}'`, n);
    if (op === "/" || op === "%") fb.at(n).trapPoint();
    if ((op === "+" || op === "-" || op === "*") && (v === "i32" || v === "i64") && this.checks(n))
      this.checkedArith(op, v, n);
    else fb.op(code);
  }

  private assign(n: AssignNode, discard: boolean): void {
    const fb = this.fb;
    const l = n.lhs;
    const t = n.ty;
    if (l.kind === "var" && this.isRegister(l)) {
      this.expr(n.rhs);
      const idx = this.localOf.get(l.v.id)!;
      if (discard) fb.localSet(idx);
      else fb.localTee(idx);
      return;
    }
    if (isAggregate(t)) {
      const dst = this.tmp("i32");
      this.addr(l, true);
      fb.localTee(dst);
      this.expr(n.rhs);
      fb.i32(t.size).prefix(PrefixOp.memory_copy).u32(0).u32(0);
      if (!discard) fb.localGet(dst);
      return;
    }
    const off = this.addrParts(l);
    this.expr(n.rhs);
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
  private applyOp(n: OpAssignNode): void {
    const t = n.ty;
    const opTy = n.opTy;
    const ptrStep = t.kind === "ptr";
    if (!ptrStep) this.convert(t, opTy);
    // The copy is checked only if the assignment is (cannotOverflow holds the original).
    this.binary({ ...n, kind: "binary", ty: opTy, checked: this.checks(n) }, true);
    if (!ptrStep) this.convert(opTy, t);
  }

  private opAssign(n: OpAssignNode, discard: boolean): void {
    const fb = this.fb;
    const l = n.lhs;
    const t = n.ty;
    if (l.kind === "var" && this.isRegister(l)) {
      const idx = this.localOf.get(l.v.id)!;
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

  private addDelta(t: Type, delta: number, n: IncDecNode): void {
    const fb = this.fb;
    const checked = this.checks(n);
    switch (valType(t)) {
      case "i32":
        if (!checked || !this.checkedAddConst("i32", BigInt(delta), n, "+"))
          fb.i32(delta).op(Op.i32_add);
        this.narrow(t);
        break;
      case "i64":
        if (!checked || !this.checkedAddConst("i64", BigInt(delta), n, "+"))
          fb.i64(BigInt(delta)).op(Op.i64_add);
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

  private incdec(n: IncDecNode, discard: boolean): void {
    const fb = this.fb;
    const l = n.lhs;
    const t = n.ty;
    const vt = valType(t);
    if (l.kind === "var" && this.isRegister(l)) {
      const idx = this.localOf.get(l.v.id)!;
      if (!discard && !n.prefix) fb.localGet(idx);
      fb.localGet(idx);
      this.addDelta(t, n.delta, n);
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
    this.addDelta(t, n.delta, n);
    if (t.bitField && !discard && n.prefix) this.truncateBits(t);
    if (!discard && n.prefix) fb.localTee(keep);
    this.storeLvalue(t, off);
    if (!discard) fb.localGet(keep);
  }

  // ---- calls ----
  private call(n: CallNode): void {
    const fb = this.fb;
    const name = n.callee;
    const args = n.args;
    if (name !== undefined) {
      const user = this.ctx.opts.funcs.get(name);
      if (user && user.body) {
        const metered = this.ctx.meteredIndex.get(name);
        if (this.metered && name === this.f.name && this.baseCase) {
          this.peeledSelfCall(args, this.baseCase, metered!);
          return;
        }
        this.structResultBuffer(user.ty);
        const nFixed = user.ty.params!.length;
        for (const a of args.slice(0, nFixed)) this.expr(a);
        if (user.ty.variadic) this.varargs(args.slice(nFixed));
        if (this.metered && metered !== undefined) {
          // Fuel and depth stay in registers along a recursion; the fuel left comes back.
          fb.localGet(this.fuelParam).localGet(this.callsLeftParam).i32(1).op(Op.i32_sub);
          fb.call(metered).localSet(this.fuelParam);
        } else this.callOut(this.ctx.funcIndex.get(name)!);
        if (user.ty.ret!.kind === "void" && n.ty.kind !== "void") fb.i32(0);
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
      const fty = n.fnTy;
      const params = fty.params!;
      if (fty.variadic) {
        // Evaluate every argument first (they may call printf themselves), then lay them out.
        const fixed = args.slice(0, params.length);
        const extra = args.slice(params.length);
        for (const a of fixed) {
          this.expr(a);
          this.hostArg(a.ty);
        }
        this.varargs(extra);
      } else {
        for (const a of args) {
          this.expr(a);
          this.hostArg(a.ty);
        }
      }
      fb.at(n);
      if (idx !== undefined) this.callOut(idx);
      else this.callHost(name);
      this.hostResult(fty.ret!);
      if (fty.ret!.kind === "void" && n.ty.kind !== "void") fb.i32(0);
      return;
    }
    // Through a function pointer. With `()` in its type, the arguments decide the signature.
    const declared = n.fnTy;
    const fty =
      declared.oldStyle && args.length > 0
        ? { ...declared, params: args.map((a) => a.ty), oldStyle: false }
        : declared;
    this.structResultBuffer(fty);
    for (const a of args.slice(0, fty.params!.length)) this.expr(a);
    if (fty.variadic) this.varargs(args.slice(fty.params!.length));
    if (!n.lhs) throw new Error("a call has neither a callee name nor a callee expression");
    this.expr(n.lhs);
    this.leaveMetered(true);
    fb.callIndirect(this.ctx.types.indexOf(userSig(fty)), FUNCTION_TABLE);
    this.enterMetered();
  }

  /** A call of this function from itself with its base case peeled (see base-case.ts): the
   * arguments go to locals, the base case's condition and value are evaluated on them in
   * place of the parameters, and only when the condition fails is the call made. A peeled
   * leaf still burns the call's unit of fuel; it nests no frame, so it tests nothing (the
   * next call does). */
  private peeledSelfCall(args: Expr[], base: BaseCase, index: number): void {
    const fb = this.fb;
    const f = this.f;
    const held = f.params.map((p, i) => {
      this.expr(args[i]!);
      const local = this.tmp(valType(p.ty));
      fb.localSet(local);
      return local;
    });
    const own = f.params.map((p) => this.localOf.get(p.id)!);
    const bind = (locals: number[]): void =>
      f.params.forEach((p, i) => this.localOf.set(p.id, locals[i]!));
    bind(held);
    this.cond(base.cond);
    fb.blockOp(Op.if, valType(f.ty.ret!));
    this.labels.push("other");
    fb.localGet(this.fuelParam).i32(1).op(Op.i32_sub).localSet(this.fuelParam);
    this.expr(base.value);
    bind(own);
    fb.op(Op.else);
    for (const local of held) fb.localGet(local);
    fb.localGet(this.fuelParam).localGet(this.callsLeftParam).i32(1).op(Op.i32_sub);
    fb.call(index).localSet(this.fuelParam);
    fb.op(Op.end);
    this.labels.pop();
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
  private varargs(extra: Expr[]): void {
    const fb = this.fb;
    let slot = 0;
    // Each argument's temporary local and first slot, in order.
    const temps: number[] = [];
    for (const a of extra) {
      this.expr(a);
      const tmp = this.tmp(varargValType(a.ty));
      fb.localSet(tmp);
      temps.push(tmp, slot);
      slot += varargSlots(a.ty);
    }
    this.varargBytes = Math.max(this.varargBytes, slot * 8);
    for (let k = 0; k < extra.length; k++) {
      const ty = extra[k]!.ty;
      const vt = varargValType(ty);
      const tmp = temps[2 * k]!;
      const i = temps[2 * k + 1]!;
      if (isAggregate(ty)) {
        // A struct travels by value: its bytes are copied into its slots.
        fb.localGet(this.fp)
          .i32(this.varargOffset + i * 8)
          .op(Op.i32_add);
        fb.localGet(tmp).i32(ty.size).prefix(PrefixOp.memory_copy).u32(0).u32(0);
        continue;
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
    }
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

  private inline(name: string, n: CallNode): void {
    const fb = this.fb;
    const a = n.args;
    const one = (): void => this.expr(a[0]!);
    const ops = ONE_OPERAND_INSTRUCTIONS.get(name);
    if (ops) {
      one();
      for (const op of ops) fb.op(op);
      return;
    }
    switch (name) {
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
        const vt = valType(a[0]!.ty);
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

/** Library functions that are their one operand followed by these instructions. */
const ONE_OPERAND_INSTRUCTIONS: ReadonlyMap<string, readonly number[]> = new Map([
  ["sqrt", [Op.f64_sqrt]],
  ["sqrtf", [Op.f32_sqrt]],
  ["fabs", [Op.f64_abs]],
  ["fabsf", [Op.f32_abs]],
  ["floor", [Op.f64_floor]],
  ["ceil", [Op.f64_ceil]],
  ["trunc", [Op.f64_trunc]],
  ["__builtin_popcount", [Op.i32_popcnt]],
  ["__builtin_clz", [Op.i32_clz]],
  ["__builtin_ctz", [Op.i32_ctz]],
  // The 64-bit forms return int, as the C builtins do.
  ["__builtin_popcountl", [Op.i64_popcnt, Op.i32_wrap_i64]],
  ["__builtin_popcountll", [Op.i64_popcnt, Op.i32_wrap_i64]],
  ["__builtin_clzl", [Op.i64_clz, Op.i32_wrap_i64]],
  ["__builtin_clzll", [Op.i64_clz, Op.i32_wrap_i64]],
  ["__builtin_ctzl", [Op.i64_ctz, Op.i32_wrap_i64]],
  ["__builtin_ctzll", [Op.i64_ctz, Op.i32_wrap_i64]],
]);

// Never generates anything: it only keeps the class's hidden class alive (see shapes.ts).
keepShape(
  new FunctionGenerator({ recursive: new Set() } as unknown as ModuleContext, {
    name: "",
    ty: funcType(T.void, []),
    params: [],
    locals: [],
    body: null,
    line: 0,
    col: 0,
    refs: new Map(),
    isStatic: false,
  }),
);

/** The C-signature entry to a function that may recurse: passes the fuel and depth globals to
 * its body (meteredSig) and stores the fuel it returns; the depth global is restored, since
 * the body sets it only for the calls it makes out of its registers. */
export function meteredWrapper(f: Func, body: number, opts: CodegenOptions): FuncBuilder {
  const params = userSig(f.ty).params.length;
  const fb = new FuncBuilder(params);
  const depth = fb.addLocal("i32");
  for (let i = 0; i < params; i++) fb.localGet(i);
  fb.globalGet(GLOBAL_FUEL).i32(callDepthCap(opts.maxCallDepth) - 1);
  fb.globalGet(GLOBAL_DEPTH).localTee(depth).op(Op.i32_sub).call(body);
  fb.globalSet(GLOBAL_FUEL).localGet(depth).globalSet(GLOBAL_DEPTH);
  return fb;
}

/** Puts back a map entry as it was before (absent when `was` is undefined). */
function restore<K, V>(map: Map<K, V>, key: K, was: V | undefined): void {
  if (was === undefined) map.delete(key);
  else map.set(key, was);
}
