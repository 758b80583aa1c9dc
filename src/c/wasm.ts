// WebAssembly binary encoder: module sections, LEB128 numbers and a function-body builder,
// so the C code generator can emit a module byte by byte without any toolchain.

import { keepShape } from "./shapes.js";

export type ValType = "i32" | "i64" | "f32" | "f64";
const VALTYPE: Record<ValType, number> = { i32: 0x7f, i64: 0x7e, f32: 0x7d, f64: 0x7c };
export const valTypeByte = (t: ValType): number => VALTYPE[t];

export interface FuncSig {
  params: ValType[];
  results: ValType[];
}

/** Opcodes used by the code generator (a subset of the MVP plus sign-extension, sat-trunc, bulk memory). */
export const Op = {
  unreachable: 0x00,
  nop: 0x01,
  block: 0x02,
  loop: 0x03,
  if: 0x04,
  else: 0x05,
  end: 0x0b,
  br: 0x0c,
  br_if: 0x0d,
  br_table: 0x0e,
  return: 0x0f,
  call: 0x10,
  call_indirect: 0x11,
  drop: 0x1a,
  select: 0x1b,
  local_get: 0x20,
  local_set: 0x21,
  local_tee: 0x22,
  global_get: 0x23,
  global_set: 0x24,
  i32_load: 0x28,
  i64_load: 0x29,
  f32_load: 0x2a,
  f64_load: 0x2b,
  i32_load8_s: 0x2c,
  i32_load8_u: 0x2d,
  i32_load16_s: 0x2e,
  i32_load16_u: 0x2f,
  i32_store: 0x36,
  i64_store: 0x37,
  f32_store: 0x38,
  f64_store: 0x39,
  i32_store8: 0x3a,
  i32_store16: 0x3b,
  i32_const: 0x41,
  i64_const: 0x42,
  f32_const: 0x43,
  f64_const: 0x44,
  i32_eqz: 0x45,
  i32_eq: 0x46,
  i32_ne: 0x47,
  i32_lt_s: 0x48,
  i32_lt_u: 0x49,
  i32_gt_s: 0x4a,
  i32_gt_u: 0x4b,
  i32_le_s: 0x4c,
  i32_le_u: 0x4d,
  i32_ge_s: 0x4e,
  i32_ge_u: 0x4f,
  i64_eqz: 0x50,
  i64_eq: 0x51,
  i64_ne: 0x52,
  i64_lt_s: 0x53,
  i64_lt_u: 0x54,
  i64_gt_s: 0x55,
  i64_gt_u: 0x56,
  i64_le_s: 0x57,
  i64_le_u: 0x58,
  i64_ge_s: 0x59,
  i64_ge_u: 0x5a,
  f32_eq: 0x5b,
  f32_ne: 0x5c,
  f32_lt: 0x5d,
  f32_gt: 0x5e,
  f32_le: 0x5f,
  f32_ge: 0x60,
  f64_eq: 0x61,
  f64_ne: 0x62,
  f64_lt: 0x63,
  f64_gt: 0x64,
  f64_le: 0x65,
  f64_ge: 0x66,
  i32_clz: 0x67,
  i32_ctz: 0x68,
  i32_popcnt: 0x69,
  i32_add: 0x6a,
  i32_sub: 0x6b,
  i32_mul: 0x6c,
  i32_div_s: 0x6d,
  i32_div_u: 0x6e,
  i32_rem_s: 0x6f,
  i32_rem_u: 0x70,
  i32_and: 0x71,
  i32_or: 0x72,
  i32_xor: 0x73,
  i32_shl: 0x74,
  i32_shr_s: 0x75,
  i32_shr_u: 0x76,
  i64_clz: 0x79,
  i64_ctz: 0x7a,
  i64_popcnt: 0x7b,
  i64_add: 0x7c,
  i64_sub: 0x7d,
  i64_mul: 0x7e,
  i64_div_s: 0x7f,
  i64_div_u: 0x80,
  i64_rem_s: 0x81,
  i64_rem_u: 0x82,
  i64_and: 0x83,
  i64_or: 0x84,
  i64_xor: 0x85,
  i64_shl: 0x86,
  i64_shr_s: 0x87,
  i64_shr_u: 0x88,
  f32_abs: 0x8b,
  f32_neg: 0x8c,
  f32_sqrt: 0x91,
  f32_add: 0x92,
  f32_sub: 0x93,
  f32_mul: 0x94,
  f32_div: 0x95,
  f64_abs: 0x99,
  f64_neg: 0x9a,
  f64_ceil: 0x9b,
  f64_floor: 0x9c,
  f64_trunc: 0x9d,
  f64_nearest: 0x9e,
  f64_sqrt: 0x9f,
  f64_add: 0xa0,
  f64_sub: 0xa1,
  f64_mul: 0xa2,
  f64_div: 0xa3,
  f64_min: 0xa4,
  f64_max: 0xa5,
  i32_wrap_i64: 0xa7,
  i64_extend_i32_s: 0xac,
  i64_extend_i32_u: 0xad,
  f32_convert_i32_s: 0xb2,
  f32_convert_i32_u: 0xb3,
  f32_convert_i64_s: 0xb4,
  f32_convert_i64_u: 0xb5,
  f32_demote_f64: 0xb6,
  f64_convert_i32_s: 0xb7,
  f64_convert_i32_u: 0xb8,
  f64_convert_i64_s: 0xb9,
  f64_convert_i64_u: 0xba,
  f64_promote_f32: 0xbb,
  i32_extend8_s: 0xc0,
  i32_extend16_s: 0xc1,
} as const;

/** 0xFC-prefixed opcodes: saturating float→int truncation and bulk memory. */
export const PrefixOp = {
  i32_trunc_sat_f32_s: 0,
  i32_trunc_sat_f32_u: 1,
  i32_trunc_sat_f64_s: 2,
  i32_trunc_sat_f64_u: 3,
  i64_trunc_sat_f32_s: 4,
  i64_trunc_sat_f32_u: 5,
  i64_trunc_sat_f64_s: 6,
  i64_trunc_sat_f64_u: 7,
  memory_copy: 10,
  memory_fill: 11,
} as const;

export function pushU32(out: number[], value: number): void {
  let v = value >>> 0;
  do {
    let byte = v & 0x7f;
    v >>>= 7;
    if (v !== 0) byte |= 0x80;
    out.push(byte);
  } while (v !== 0);
}

/** A growable byte buffer the encoder writes into directly: no number[] per function or
 * section, which cost a push per byte and a copy per section on every compiled block. */
export class ByteWriter {
  buf: Uint8Array;
  length = 0;
  constructor(capacity = 64) {
    this.buf = new Uint8Array(capacity);
  }
  private grow(extra: number): void {
    let size = this.buf.length * 2;
    while (size < this.length + extra) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }
  byte(b: number): this {
    if (this.length === this.buf.length) this.grow(1);
    this.buf[this.length++] = b;
    return this;
  }
  u32(value: number): this {
    if (this.length + 5 > this.buf.length) this.grow(5);
    const buf = this.buf;
    let v = value >>> 0;
    while (v >= 0x80) {
      buf[this.length++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    buf[this.length++] = v;
    return this;
  }
  s32(value: number): this {
    if (this.length + 5 > this.buf.length) this.grow(5);
    const buf = this.buf;
    let v = value | 0;
    for (;;) {
      const byte = v & 0x7f;
      v >>= 7;
      if ((v === 0 && (byte & 0x40) === 0) || (v === -1 && (byte & 0x40) !== 0)) {
        buf[this.length++] = byte;
        return this;
      }
      buf[this.length++] = byte | 0x80;
    }
  }
  s64(value: bigint): this {
    // Most constants fit in 32 bits, whose LEB128 is the same in both widths.
    if (value >= -0x80000000n && value <= 0x7fffffffn) return this.s32(Number(value));
    // Up to 2^53 (a counted loop's trip cap, 2^40) in doubles: BigInt shifts allocate.
    if (value >= -SAFE_LIMIT && value <= SAFE_LIMIT) {
      let n = Number(value);
      for (;;) {
        const byte = n - Math.floor(n / 128) * 128;
        n = Math.floor(n / 128);
        if ((n === 0 && (byte & 0x40) === 0) || (n === -1 && (byte & 0x40) !== 0))
          return this.byte(byte);
        this.byte(byte | 0x80);
      }
    }
    let v = BigInt.asIntN(64, value);
    for (;;) {
      const byte = Number(v & 0x7fn);
      v >>= 7n;
      if ((v === 0n && (byte & 0x40) === 0) || (v === -1n && (byte & 0x40) !== 0))
        return this.byte(byte);
      this.byte(byte | 0x80);
    }
  }
  /** Little-endian bytes of a float (4) or double (8). */
  float(v: number, size: 4 | 8): this {
    if (size === 4) scratch.setFloat32(0, v, true);
    else scratch.setFloat64(0, v, true);
    for (let i = 0; i < size; i++) this.byte(scratch.getUint8(i));
    return this;
  }
  append(from: ByteWriter): this {
    const n = from.length;
    if (this.length + n > this.buf.length) this.grow(n);
    const buf = this.buf;
    // Short pieces (a section's header, a body's locals) byte by byte: a subarray view per
    // append was an allocation for every few bytes moved.
    if (n < 128) for (let i = 0; i < n; i++) buf[this.length + i] = from.buf[i]!;
    else buf.set(from.buf.subarray(0, n), this.length);
    this.length += n;
    return this;
  }
  /** A length-prefixed UTF-8 name. */
  name(s: string): this {
    if (ASCII.test(s)) {
      // The usual case (import and export names): no Buffer per name.
      this.u32(s.length);
      if (this.length + s.length > this.buf.length) this.grow(s.length);
      for (let i = 0; i < s.length; i++) this.buf[this.length++] = s.charCodeAt(i);
      return this;
    }
    const bytes = Buffer.from(s, "utf8");
    this.u32(bytes.length);
    if (this.length + bytes.length > this.buf.length) this.grow(bytes.length);
    this.buf.set(bytes, this.length);
    this.length += bytes.length;
    return this;
  }
  /** The bytes written so far: a view, valid until the writer is written to again. */
  view(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}

const scratch = new DataView(new ArrayBuffer(8));
const SAFE_LIMIT = BigInt(Number.MAX_SAFE_INTEGER);
const ASCII = /^[\x00-\x7f]*$/;

/** Function bodies' writers, reused from block to block: a fresh typed array per function
 * (and per prologue) was a measurable part of compiling a short block. */
const writerPool: ByteWriter[] = [];
const WRITER_POOL_SIZE = 64;

function borrowWriter(): ByteWriter {
  const w = writerPool.pop() ?? new ByteWriter(1024);
  w.length = 0;
  return w;
}

/** Gives a writer back to the pool once nothing reads it any more. */
export function releaseWriter(w: ByteWriter): void {
  if (writerPool.length < WRITER_POOL_SIZE && w.buf.length <= 1 << 20) writerPool.push(w);
}

/** Builds one function body; locals beyond the parameters are declared with addLocal. */
export class FuncBuilder {
  /** The body's bytes; borrowed from a pool, so give it back with release() once encoded. */
  code = borrowWriter();
  readonly locals: ValType[] = [];
  /** Source positions as flat triples (code offset, line, column) at instructions that can trap. */
  positions: number[] = [];
  /** Pairs (code offset, trap code) of `unreachable` instructions that stand for a C error. */
  trapCodes: number[] = [];
  line = 0;
  col = 0;
  /** Emits what must happen before a trap leaves the function (state kept in locals). */
  beforeTrap: (() => void) | undefined = undefined;
  constructor(readonly paramCount: number) {}

  /** Sets the source position recorded for the next trapping instructions. */
  at(pos: { line: number; col: number }): this {
    this.line = pos.line;
    this.col = pos.col;
    return this;
  }
  /** Records the current position for the instruction emitted next (one that may trap). */
  trapPoint(): this {
    this.mark();
    return this;
  }
  /** Traps with `code` here: an `unreachable` the host maps back to the code and position
   * (no call in the hot path, so the check costs a compare and a branch). */
  trapHere(code: number): this {
    this.beforeTrap?.();
    this.mark();
    this.trapCodes.push(this.code.length, code);
    this.code.byte(Op.unreachable);
    return this;
  }
  private mark(): void {
    if (this.line > 0) this.positions.push(this.code.length, this.line, this.col);
  }
  /** Hands over the code emitted so far and starts an empty body (so that a prologue can be
   * emitted after the body and placed in front of it). */
  takeCode(): ByteWriter {
    const code = this.code;
    this.code = borrowWriter();
    return code;
  }
  /** Returns the code buffer to the pool (the builder must not be used afterwards). */
  release(): void {
    releaseWriter(this.code);
  }

  addLocal(t: ValType): number {
    this.locals.push(t);
    return this.paramCount + this.locals.length - 1;
  }
  op(code: number): this {
    this.code.byte(code);
    return this;
  }
  u32(v: number): this {
    this.code.u32(v);
    return this;
  }
  i32(v: number): this {
    this.code.byte(Op.i32_const).s32(v);
    return this;
  }
  i64(v: bigint): this {
    this.code.byte(Op.i64_const).s64(v);
    return this;
  }
  f32(v: number): this {
    this.code.byte(Op.f32_const).float(v, 4);
    return this;
  }
  f64(v: number): this {
    this.code.byte(Op.f64_const).float(v, 8);
    return this;
  }
  prefix(code: number): this {
    this.mark();
    this.code.byte(0xfc).u32(code);
    return this;
  }
  /** A memory access with alignment hint (log2) and constant offset. */
  mem(code: number, alignLog2: number, offset: number): this {
    this.mark();
    this.code.byte(code).u32(alignLog2).u32(offset);
    return this;
  }
  /** block/loop/if with an optional single result type. */
  blockOp(code: number, result?: ValType): this {
    this.code.byte(code).byte(result ? VALTYPE[result] : 0x40);
    return this;
  }
  localGet(i: number): this {
    this.code.byte(Op.local_get).u32(i);
    return this;
  }
  localSet(i: number): this {
    this.code.byte(Op.local_set).u32(i);
    return this;
  }
  localTee(i: number): this {
    this.code.byte(Op.local_tee).u32(i);
    return this;
  }
  globalGet(i: number): this {
    this.code.byte(Op.global_get).u32(i);
    return this;
  }
  globalSet(i: number): this {
    this.code.byte(Op.global_set).u32(i);
    return this;
  }
  call(i: number): this {
    this.mark();
    this.code.byte(Op.call).u32(i);
    return this;
  }
  /** call_indirect through `table` with signature `typeIndex` (the slot is on the stack). */
  callIndirect(typeIndex: number, table: number): this {
    this.mark();
    this.code.byte(Op.call_indirect).u32(typeIndex).u32(table);
    return this;
  }
  br(depth: number): this {
    this.code.byte(Op.br).u32(depth);
    return this;
  }
  brIf(depth: number): this {
    this.code.byte(Op.br_if).u32(depth);
    return this;
  }
}

keepShape(new FuncBuilder(0));

export interface ImportedFunc {
  module: string;
  name: string;
  sig: FuncSig;
}

export interface GlobalDef {
  type: ValType;
  mutable: boolean;
  init: number;
  exportName?: string;
}

export interface ModuleSpec {
  /** The module's name in stack traces (the name section's module name). */
  name?: string;
  imports: ImportedFunc[];
  /** An imported funcref table (table 0 when present, so the module's own table is then 1). */
  importedTable?: { module: string; name: string; size: number };
  /** Imported memory (module "env", name "memory"), shared by every module of a session. */
  memory?: { module: string; name: string; minPages: number; maxPages: number };
  functions: { sig: FuncSig; body: FuncBuilder; exportName?: string }[];
  globals: GlobalDef[];
  /** Function indices placed in a table at slots 0..n-1 (for call_indirect); null leaves a hole. */
  table: (number | null)[];
  exportTable?: string;
  /** Marks every function for lazy compilation in a compilation-hints section (V8's
   * --experimental-wasm-compilation-hints), so that V8 can compile it lazily while its
   * process-wide --wasm-lazy-compilation stays off (see src/vm/tiers.ts). */
  lazyHints?: boolean;
}

/** The compilation-hints section's name, and its hint byte for "lazy, default tiers"
 * (strategy in bits 0-1: 1 = lazy; baseline and top tier in bits 2-5: 0 = V8's default). */
const HINTS_SECTION = "compilationHints";
const HINT_LAZY = 0x01;

/** The module being encoded, and one section's content before its size is known: reused by
 * every encodeModule call (compiling is synchronous, so calls never overlap). */
const moduleOut = new ByteWriter(4096);
const sectionOut = new ByteWriter(1024);
const localsOut = new ByteWriter(64);

/** Starts a section: its content goes to the returned writer until endSection. */
function beginSection(): ByteWriter {
  sectionOut.length = 0;
  return sectionOut;
}
function endSection(out: ByteWriter, id: number): void {
  out.byte(id).u32(sectionOut.length).append(sectionOut);
}

function writeSig(out: ByteWriter, sig: FuncSig): void {
  out.byte(0x60).u32(sig.params.length);
  for (const p of sig.params) out.byte(VALTYPE[p]);
  out.u32(sig.results.length);
  for (const r of sig.results) out.byte(VALTYPE[r]);
}

/** Value types as base-5 digits (0 separates parameters from results). */
const SIG_DIGIT: Record<ValType, number> = { i32: 1, i64: 2, f32: 3, f64: 4 };

/** A signature's key: its parameter digits, a 0, its result digits, read as one base-5 number
 * (exact up to 22 digits; longer signatures are keyed by their spelling). No string is built
 * for the usual signature, and the number is unique: only parameterless signatures lack the 0. */
function sigKey(s: FuncSig): number | string {
  if (s.params.length + s.results.length > 21)
    return s.params.join(",") + ">" + s.results.join(",");
  let k = 0;
  for (const p of s.params) k = k * 5 + SIG_DIGIT[p];
  k *= 5;
  for (const r of s.results) k = k * 5 + SIG_DIGIT[r];
  return k;
}

/** Interns function signatures so that call_indirect can name a type index. */
export class TypeTable {
  readonly sigs: FuncSig[] = [];
  private readonly index = new Map<number | string, number>();
  indexOf(sig: FuncSig): number {
    const k = sigKey(sig);
    let i = this.index.get(k);
    if (i === undefined) {
      i = this.sigs.length;
      this.sigs.push(sig);
      this.index.set(k, i);
    }
    return i;
  }
}

keepShape(new TypeTable());

export interface EncodedModule {
  /** The module: a view of the encoder's buffer, valid until the next encodeModule call, so
   * compile it (or copy it) first. V8 copies a module's bytes anyway, and a fresh copy per
   * block was most of what encoding allocated. */
  bytes: Uint8Array;
  /** Module byte offset of each defined function's first instruction (for trap positions). */
  codeStarts: number[];
}

/** Encodes the whole module; `types` must already contain every signature used by call_indirect. */
export function encodeModule(spec: ModuleSpec, types: TypeTable): EncodedModule {
  // Plain loops, not callbacks, throughout the encoder and the code generator: a closure made
  // per call loses its optimized code with it at the next full collection (see shapes.ts).
  const importTypes: number[] = [];
  for (const imp of spec.imports) importTypes.push(types.indexOf(imp.sig));
  const funcTypes: number[] = [];
  for (const f of spec.functions) funcTypes.push(types.indexOf(f.sig));
  const out = moduleOut;
  out.length = 0;
  out.byte(0x00).byte(0x61).byte(0x73).byte(0x6d).byte(0x01).byte(0x00).byte(0x00).byte(0x00);

  let sec = beginSection();
  sec.u32(types.sigs.length);
  for (const s of types.sigs) writeSig(sec, s);
  endSection(out, 1);

  sec = beginSection();
  sec.u32(spec.imports.length + (spec.memory ? 1 : 0) + (spec.importedTable ? 1 : 0));
  for (let i = 0; i < spec.imports.length; i++) {
    const imp = spec.imports[i]!;
    sec.name(imp.module).name(imp.name).byte(0x00).u32(importTypes[i]!);
  }
  if (spec.importedTable) {
    sec.name(spec.importedTable.module).name(spec.importedTable.name);
    sec.byte(0x01).byte(0x70).byte(0x00).u32(spec.importedTable.size);
  }
  if (spec.memory) {
    sec.name(spec.memory.module).name(spec.memory.name).byte(0x02).byte(0x01);
    sec.u32(spec.memory.minPages).u32(spec.memory.maxPages);
  }
  endSection(out, 2);
  // With an imported table, the module's own table comes second in the table index space.
  const ownTable = spec.importedTable ? 1 : 0;

  sec = beginSection();
  sec.u32(funcTypes.length);
  for (const t of funcTypes) sec.u32(t);
  endSection(out, 3);

  if (spec.lazyHints) {
    // A custom section, which V8 reads only between the function and the code sections.
    sec = beginSection();
    sec.name(HINTS_SECTION).u32(funcTypes.length);
    for (let i = 0; i < funcTypes.length; i++) sec.byte(HINT_LAZY);
    endSection(out, 0);
  }

  sec = beginSection();
  sec.u32(1).byte(0x70).byte(0x00).u32(spec.table.length);
  endSection(out, 4);

  sec = beginSection();
  sec.u32(spec.globals.length);
  for (const g of spec.globals) {
    sec.byte(VALTYPE[g.type]).byte(g.mutable ? 1 : 0);
    if (g.type === "i32") sec.byte(Op.i32_const).s32(g.init);
    else if (g.type === "i64") sec.byte(Op.i64_const).s64(BigInt(g.init));
    else throw new Error("float globals are not used");
    sec.byte(Op.end);
  }
  endSection(out, 6);

  sec = beginSection();
  const exports: [string, number, number][] = [];
  const nImports = spec.imports.length;
  for (let i = 0; i < spec.functions.length; i++) {
    const name = spec.functions[i]!.exportName;
    if (name) exports.push([name, 0x00, nImports + i]);
  }
  for (let i = 0; i < spec.globals.length; i++) {
    const name = spec.globals[i]?.exportName;
    if (name) exports.push([name, 0x03, i]);
  }
  if (spec.exportTable) exports.push([spec.exportTable, 0x01, ownTable]);
  sec.u32(exports.length);
  for (const [name, kind, idx] of exports) sec.name(name).byte(kind).u32(idx);
  endSection(out, 7);

  let filled = 0;
  for (const f of spec.table) if (f !== null) filled++;
  if (filled > 0) {
    sec = beginSection();
    sec.u32(filled);
    for (let slot = 0; slot < spec.table.length; slot++) {
      const f = spec.table[slot];
      if (f === null || f === undefined) continue;
      // Flags 0: an active segment for table 0; 2: for the table index that follows.
      if (ownTable === 0) sec.byte(0x00);
      else sec.byte(0x02).byte(ownTable);
      sec.byte(Op.i32_const).s32(slot).byte(Op.end);
      if (ownTable !== 0) sec.byte(0x00); // element kind: funcref
      sec.u32(1).u32(f);
    }
    endSection(out, 9);
  }

  sec = beginSection();
  const starts: number[] = [];
  sec.u32(spec.functions.length);
  const decl = localsOut;
  for (const f of spec.functions) {
    // Run-length encoded local declarations.
    decl.length = 0;
    const locals = f.body.locals;
    let groups = 0;
    for (let i = 0; i < locals.length; i++) if (i === 0 || locals[i] !== locals[i - 1]) groups++;
    decl.u32(groups);
    for (let i = 0; i < locals.length;) {
      let j = i + 1;
      while (j < locals.length && locals[j] === locals[i]) j++;
      decl.u32(j - i).byte(VALTYPE[locals[i]!]);
      i = j;
    }
    sec.u32(decl.length + f.body.code.length + 1).append(decl);
    starts.push(sec.length);
    sec.append(f.body.code).byte(Op.end);
  }
  out.byte(10).u32(sec.length);
  const codeSecStart = out.length;
  out.append(sec);

  if (spec.name !== undefined) {
    sec = beginSection();
    sec.name("name").byte(0x00);
    const nameBytes = Buffer.byteLength(spec.name, "utf8");
    // Subsection 0 (module name): its size, then the name itself.
    sec.u32(nameBytes + (nameBytes < 128 ? 1 : nameBytes < 16384 ? 2 : 3)).name(spec.name);
    endSection(out, 0);
  }
  for (let i = 0; i < starts.length; i++) starts[i] += codeSecStart;
  return { bytes: out.view(), codeStarts: starts };
}
