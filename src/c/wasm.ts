// WebAssembly binary encoder: module sections, LEB128 numbers and a function-body builder,
// so the C code generator can emit a module byte by byte without any toolchain.

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

export function pushS32(out: number[], value: number): void {
  let v = value | 0;
  for (;;) {
    const byte = v & 0x7f;
    v >>= 7;
    if ((v === 0 && (byte & 0x40) === 0) || (v === -1 && (byte & 0x40) !== 0)) {
      out.push(byte);
      return;
    }
    out.push(byte | 0x80);
  }
}

export function pushS64(out: number[], value: bigint): void {
  let v = BigInt.asIntN(64, value);
  for (;;) {
    const byte = Number(v & 0x7fn);
    v >>= 7n;
    if ((v === 0n && (byte & 0x40) === 0) || (v === -1n && (byte & 0x40) !== 0)) {
      out.push(byte);
      return;
    }
    out.push(byte | 0x80);
  }
}

const scratch = new DataView(new ArrayBuffer(8));

/** Builds one function body; locals beyond the parameters are declared with addLocal. */
export class FuncBuilder {
  readonly code: number[] = [];
  readonly locals: ValType[] = [];
  /** Source positions as flat triples (code offset, line, column) at instructions that can trap. */
  positions: number[] = [];
  /** Pairs (code offset, trap code) of `unreachable` instructions that stand for a C error. */
  trapCodes: number[] = [];
  line = 0;
  col = 0;
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
    this.mark();
    this.trapCodes.push(this.code.length, code);
    this.code.push(Op.unreachable);
    return this;
  }
  private mark(): void {
    if (this.line > 0) this.positions.push(this.code.length, this.line, this.col);
  }

  addLocal(t: ValType): number {
    this.locals.push(t);
    return this.paramCount + this.locals.length - 1;
  }
  op(code: number): this {
    this.code.push(code);
    return this;
  }
  u32(v: number): this {
    pushU32(this.code, v);
    return this;
  }
  i32(v: number): this {
    this.code.push(Op.i32_const);
    pushS32(this.code, v);
    return this;
  }
  i64(v: bigint): this {
    this.code.push(Op.i64_const);
    pushS64(this.code, v);
    return this;
  }
  f32(v: number): this {
    this.code.push(Op.f32_const);
    scratch.setFloat32(0, v, true);
    for (let i = 0; i < 4; i++) this.code.push(scratch.getUint8(i));
    return this;
  }
  f64(v: number): this {
    this.code.push(Op.f64_const);
    scratch.setFloat64(0, v, true);
    for (let i = 0; i < 8; i++) this.code.push(scratch.getUint8(i));
    return this;
  }
  prefix(code: number): this {
    this.mark();
    this.code.push(0xfc);
    pushU32(this.code, code);
    return this;
  }
  /** A memory access with alignment hint (log2) and constant offset. */
  mem(code: number, alignLog2: number, offset: number): this {
    this.mark();
    this.code.push(code);
    pushU32(this.code, alignLog2);
    pushU32(this.code, offset);
    return this;
  }
  /** block/loop/if with an optional single result type. */
  blockOp(code: number, result?: ValType): this {
    this.code.push(code, result ? VALTYPE[result] : 0x40);
    return this;
  }
  localGet(i: number): this {
    this.code.push(Op.local_get);
    pushU32(this.code, i);
    return this;
  }
  localSet(i: number): this {
    this.code.push(Op.local_set);
    pushU32(this.code, i);
    return this;
  }
  localTee(i: number): this {
    this.code.push(Op.local_tee);
    pushU32(this.code, i);
    return this;
  }
  globalGet(i: number): this {
    this.code.push(Op.global_get);
    pushU32(this.code, i);
    return this;
  }
  globalSet(i: number): this {
    this.code.push(Op.global_set);
    pushU32(this.code, i);
    return this;
  }
  call(i: number): this {
    this.mark();
    this.code.push(Op.call);
    pushU32(this.code, i);
    return this;
  }
  /** call_indirect through `table` with signature `typeIndex` (the slot is on the stack). */
  callIndirect(typeIndex: number, table: number): this {
    this.mark();
    this.code.push(Op.call_indirect);
    pushU32(this.code, typeIndex);
    pushU32(this.code, table);
    return this;
  }
  br(depth: number): this {
    this.code.push(Op.br);
    pushU32(this.code, depth);
    return this;
  }
  brIf(depth: number): this {
    this.code.push(Op.br_if);
    pushU32(this.code, depth);
    return this;
  }
}

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
}

function section(out: number[], id: number, content: number[]): void {
  out.push(id);
  pushU32(out, content.length);
  for (const b of content) out.push(b);
}

function pushName(out: number[], s: string): void {
  const bytes = Buffer.from(s, "utf8");
  pushU32(out, bytes.length);
  for (const b of bytes) out.push(b);
}

function pushSig(out: number[], sig: FuncSig): void {
  out.push(0x60);
  pushU32(out, sig.params.length);
  for (const p of sig.params) out.push(VALTYPE[p]);
  pushU32(out, sig.results.length);
  for (const r of sig.results) out.push(VALTYPE[r]);
}

const sigKey = (s: FuncSig): string => s.params.join(",") + ">" + s.results.join(",");

/** Interns function signatures so that call_indirect can name a type index. */
export class TypeTable {
  readonly sigs: FuncSig[] = [];
  private readonly index = new Map<string, number>();
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

export interface EncodedModule {
  bytes: Uint8Array;
  /** Module byte offset of each defined function's first instruction (for trap positions). */
  codeStarts: number[];
}

/** Encodes the whole module; `types` must already contain every signature used by call_indirect. */
export function encodeModule(spec: ModuleSpec, types: TypeTable): EncodedModule {
  const importTypes = spec.imports.map((i) => types.indexOf(i.sig));
  const funcTypes = spec.functions.map((f) => types.indexOf(f.sig));
  const out: number[] = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];

  const typeSec: number[] = [];
  pushU32(typeSec, types.sigs.length);
  for (const s of types.sigs) pushSig(typeSec, s);
  section(out, 1, typeSec);

  const importSec: number[] = [];
  pushU32(importSec, spec.imports.length + (spec.memory ? 1 : 0) + (spec.importedTable ? 1 : 0));
  spec.imports.forEach((imp, i) => {
    pushName(importSec, imp.module);
    pushName(importSec, imp.name);
    importSec.push(0x00);
    pushU32(importSec, importTypes[i]!);
  });
  if (spec.importedTable) {
    pushName(importSec, spec.importedTable.module);
    pushName(importSec, spec.importedTable.name);
    importSec.push(0x01, 0x70, 0x00);
    pushU32(importSec, spec.importedTable.size);
  }
  if (spec.memory) {
    pushName(importSec, spec.memory.module);
    pushName(importSec, spec.memory.name);
    importSec.push(0x02, 0x01);
    pushU32(importSec, spec.memory.minPages);
    pushU32(importSec, spec.memory.maxPages);
  }
  section(out, 2, importSec);
  // With an imported table, the module's own table comes second in the table index space.
  const ownTable = spec.importedTable ? 1 : 0;

  const funcSec: number[] = [];
  pushU32(funcSec, funcTypes.length);
  for (const t of funcTypes) pushU32(funcSec, t);
  section(out, 3, funcSec);

  const tableSize = spec.table.length;
  const tableSec: number[] = [];
  pushU32(tableSec, 1);
  tableSec.push(0x70, 0x00);
  pushU32(tableSec, tableSize);
  section(out, 4, tableSec);

  const globalSec: number[] = [];
  pushU32(globalSec, spec.globals.length);
  for (const g of spec.globals) {
    globalSec.push(VALTYPE[g.type], g.mutable ? 1 : 0);
    if (g.type === "i32") {
      globalSec.push(Op.i32_const);
      pushS32(globalSec, g.init);
    } else if (g.type === "i64") {
      globalSec.push(Op.i64_const);
      pushS64(globalSec, BigInt(g.init));
    } else throw new Error("float globals are not used");
    globalSec.push(Op.end);
  }
  section(out, 6, globalSec);

  const exportSec: number[] = [];
  const exports: [string, number, number][] = [];
  const nImports = spec.imports.length;
  spec.functions.forEach((f, i) => {
    if (f.exportName) exports.push([f.exportName, 0x00, nImports + i]);
  });
  spec.globals.forEach((g, i) => {
    if (g.exportName) exports.push([g.exportName, 0x03, i]);
  });
  if (spec.exportTable) exports.push([spec.exportTable, 0x01, ownTable]);
  pushU32(exportSec, exports.length);
  for (const [name, kind, idx] of exports) {
    pushName(exportSec, name);
    exportSec.push(kind);
    pushU32(exportSec, idx);
  }
  section(out, 7, exportSec);

  const filled = spec.table.map((f, slot) => [f, slot] as const).filter(([f]) => f !== null);
  if (filled.length > 0) {
    const elemSec: number[] = [];
    pushU32(elemSec, filled.length);
    for (const [f, slot] of filled) {
      // Flags 0: an active segment for table 0; 2: for the table index that follows.
      if (ownTable === 0) elemSec.push(0x00);
      else elemSec.push(0x02, ownTable);
      elemSec.push(Op.i32_const);
      pushS32(elemSec, slot);
      elemSec.push(Op.end);
      if (ownTable !== 0) elemSec.push(0x00); // element kind: funcref
      pushU32(elemSec, 1);
      pushU32(elemSec, f!);
    }
    section(out, 9, elemSec);
  }

  const codeSec: number[] = [];
  const starts: number[] = [];
  pushU32(codeSec, spec.functions.length);
  for (const f of spec.functions) {
    const body: number[] = [];
    // Run-length encode the local declarations.
    const groups: [number, ValType][] = [];
    for (const t of f.body.locals) {
      const last = groups[groups.length - 1];
      if (last && last[1] === t) last[0]++;
      else groups.push([1, t]);
    }
    pushU32(body, groups.length);
    for (const [n, t] of groups) {
      pushU32(body, n);
      body.push(VALTYPE[t]);
    }
    const localsSize = body.length;
    for (const b of f.body.code) body.push(b);
    body.push(Op.end);
    pushU32(codeSec, body.length);
    starts.push(codeSec.length + localsSize);
    for (const b of body) codeSec.push(b);
  }
  const header: number[] = [];
  pushU32(header, codeSec.length);
  const codeSecStart = out.length + 1 + header.length;
  section(out, 10, codeSec);
  if (spec.name !== undefined) {
    const names: number[] = [];
    pushName(names, "name");
    const moduleName: number[] = [];
    pushName(moduleName, spec.name);
    names.push(0x00);
    pushU32(names, moduleName.length);
    for (const b of moduleName) names.push(b);
    section(out, 0, names);
  }
  return { bytes: Uint8Array.from(out), codeStarts: starts.map((s) => s + codeSecStart) };
}
