// The WebAssembly SIMD kernels behind the vocabulary-wide passes of sampling and statistics
// (max, softmax weights, entropy sums, threshold filtering, snapshot diffs, in-place edits),
// encoded here byte by byte: each is one pass over the logits, four lanes at a time, which a
// JavaScript loop cannot match at 152K tokens. vocab-kernels.ts wraps them.
//
// Buffers are padded with −Infinity to a multiple of BLOCK floats, so no kernel needs a tail.
import { pushU32 } from "../c/wasm.js";

/** Floats per block: the unit of the weight sums kept for the draw (and of padding). */
export const BLOCK = 256;

// ---- encoding ----
const I32 = 0x7f;
const F32 = 0x7d;
const F64 = 0x7c;
const V128 = 0x7b;

const u32 = (v: number): number[] => {
  const out: number[] = [];
  pushU32(out, v);
  return out;
};
const s32 = (v: number): number[] => {
  const out: number[] = [];
  let x = v | 0;
  for (;;) {
    const byte = x & 0x7f;
    x >>= 7;
    if ((x === 0 && (byte & 0x40) === 0) || (x === -1 && (byte & 0x40) !== 0)) {
      out.push(byte);
      return out;
    }
    out.push(byte | 0x80);
  }
};
const bytesOf = (a: Float32Array | Float64Array): number[] => [...new Uint8Array(a.buffer)];

const get = (i: number) => [0x20, ...u32(i)];
const set = (i: number) => [0x21, ...u32(i)];
const tee = (i: number) => [0x22, ...u32(i)];
const i32c = (v: number) => [0x41, ...s32(v)];
const f32c = (v: number) => [0x43, ...bytesOf(Float32Array.of(v))];
const f64c = (v: number) => [0x44, ...bytesOf(Float64Array.of(v))];
const simd = (op: number) => [0xfd, ...u32(op)];
const vload = (offset = 0) => [...simd(0x00), 4, ...u32(offset)];
const vstoreAt = (offset: number) => [...simd(0x0b), 4, ...u32(offset)];
const vstore = vstoreAt(0);
/** A v128 constant with v in every f32 lane (cheaper in a loop than a splat). */
const vf32 = (v: number) => [...simd(0x0c), ...bytesOf(Float32Array.of(v, v, v, v))];
const shuffle = (lanes: number[]) => [...simd(0x0d), ...lanes];
const f32x4 = {
  splat: simd(0x13),
  lane: (i: number) => [...simd(0x1f), i],
  eq: simd(0x41),
  lt: simd(0x43),
  gt: simd(0x44),
  ge: simd(0x46),
  nearest: simd(0x6a),
  abs: simd(0xe0),
  add: simd(0xe4),
  sub: simd(0xe5),
  mul: simd(0xe6),
  pmin: simd(0xea),
  pmax: simd(0xeb),
  truncSat: simd(0xf8),
  truncSatU: simd(0xf9),
  demoteZero: simd(0x5e),
};
const f64x2 = {
  splat: simd(0x14),
  lane: (i: number) => [...simd(0x21), i],
  promoteLow: simd(0x5f),
  add: simd(0xf0),
  mul: simd(0xf2),
};
const i32x4 = { splat: simd(0x11), shl: simd(0xab), add: simd(0xae), bitmask: simd(0xa4) };
const v128 = { and: simd(0x4e), bitselect: simd(0x52), anyTrue: simd(0x53) };
const HIGH_HALF = [8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7];
const JOIN_LOW_HALVES = [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23];
const op = {
  i32Add: 0x6a,
  i32Sub: 0x6b,
  i32Mul: 0x6c,
  i32GeU: 0x4f,
  i32Shl: 0x74,
  f32Min: 0x96,
  f32Max: 0x97,
  f64Add: 0xa0,
  f64Ne: 0x62,
  f64Load: [0x2b, 3, 0],
  f32Gt: 0x5e,
  f32Sub: 0x93,
  f32Store: [0x38, 2, 0],
  f32Load: [0x2a, 2, 0],
  i32Load: [0x28, 2, 0],
  else: 0x05,
  i32Store: [0x36, 2, 0],
  f64Store: [0x39, 3, 0],
  f64StoreAt: (offset: number) => [0x39, 3, ...u32(offset)],
  block: [0x02, 0x40],
  loop: [0x03, 0x40],
  if: [0x04, 0x40],
  end: [0x0b],
  br: (d: number) => [0x0c, ...u32(d)],
  brIf: (d: number) => [0x0d, ...u32(d)],
};

interface KernelFn {
  name: string;
  params: number[];
  results: number[];
  locals: number[];
  body: number[];
}

/** `for (; p < end; p += 16·vectors) body` over vectors; p and end are locals. */
const eachVector = (p: number, end: number, body: number[], vectors = 1): number[] => [
  ...op.block,
  ...op.loop,
  ...get(p),
  ...get(end),
  op.i32GeU,
  ...op.brIf(1),
  ...body,
  ...advance(p, vectors),
  ...op.br(0),
  ...op.end,
  ...op.end,
];

/** `for (; p < end;) { stepEnd = p + bytes (at most end, with clamp); body }`, body advancing p
 * to stepEnd: blocks of BLOCK floats by default. */
const eachBlock = (
  p: number,
  end: number,
  stepEnd: number,
  body: number[],
  bytes = BLOCK * 4,
  clamp = false,
): number[] => [
  ...op.block,
  ...op.loop,
  ...get(p),
  ...get(end),
  op.i32GeU,
  ...op.brIf(1),
  ...get(p),
  ...i32c(bytes),
  op.i32Add,
  ...(clamp
    ? [...tee(stepEnd), ...get(end), ...get(stepEnd), ...get(end), 0x49 /* i32.lt_u */, 0x1b]
    : []), // select: the smaller
  ...set(stepEnd),
  ...body,
  ...op.br(0),
  ...op.end,
  ...op.end,
];

/** Stores the f64 on the stack as the block's sum (sums[2 + block], blockPtr walking from
 * sums), adds it to the f64 local `total` and moves to the next block. */
const storeBlockSum = (blockPtr: number, total: number, tmp: number): number[] => [
  ...set(tmp),
  ...get(blockPtr),
  ...get(tmp),
  ...op.f64StoreAt(16),
  ...get(total),
  ...get(tmp),
  op.f64Add,
  ...set(total),
  ...get(blockPtr),
  ...i32c(8),
  op.i32Add,
  ...set(blockPtr),
];

/** ptr += one vector (or several). */
const advance = (ptr: number, vectors = 1): number[] => [
  ...get(ptr),
  ...i32c(16 * vectors),
  op.i32Add,
  ...set(ptr),
];

/** local ← the f32 (or, with f64x2, f64) param in every lane. */
const splatInto = (param: number, local: number, splat = f32x4.splat) => [
  ...get(param),
  ...splat,
  ...set(local),
];

/** base = p (to turn addresses into token ids) and end = p + 4 * n. */
const startScan = (p: number, n: number, end: number, base: number) => [
  ...get(p),
  ...set(base),
  ...endOf(p, n, end),
];

/** end = p + 4 * n (n floats). */
const endOf = (p: number, n: number, end: number) => [
  ...get(p),
  ...get(n),
  ...i32c(2),
  op.i32Shl,
  op.i32Add,
  ...set(end),
];

/** Horizontal add of an f64x2 local onto the f64 stack value. */
const sumLanes64 = (v: number) => [
  ...get(v),
  ...f64x2.lane(0),
  ...get(v),
  ...f64x2.lane(1),
  op.f64Add,
];

/** The largest (f32.max) or smallest (f32.min) lane of an f32x4 local, onto the stack. */
const horizontal = (v: number, pick: number) => [
  ...get(v),
  ...f32x4.lane(0),
  ...get(v),
  ...f32x4.lane(1),
  pick,
  ...get(v),
  ...f32x4.lane(2),
  ...get(v),
  ...f32x4.lane(3),
  pick,
  pick,
];
const horizontalMax = (v: number) => horizontal(v, op.f32Max);
const horizontalMin = (v: number) => horizontal(v, op.f32Min);

/** (a0 ∘ a1) ∘ (a2 ∘ a3) of four v128 locals onto the stack, ∘ a lane-wise binary op. */
const combine4 = (locals: number[], binary: number[]) => [
  ...get(locals[0]!),
  ...get(locals[1]!),
  ...binary,
  ...get(locals[2]!),
  ...get(locals[3]!),
  ...binary,
  ...binary,
];

/** Stores, at p + offset, the f32x4 local x with every lane below vBound replaced by vValue's
 * (NaN stays). */
const maskVector = (p: number, x: number, vBound: number, vValue: number, offset = 0) => [
  ...get(p),
  ...get(vValue),
  ...get(x),
  ...get(x),
  ...get(vBound),
  ...f32x4.lt,
  ...v128.bitselect,
  ...vstoreAt(offset),
];

/** Accumulates the two halves of the f32x4 on the stack (kept in `tmp`) into f64x2 `acc`. */
const accumulate64 = (tmp: number, acc: number) => [
  ...tee(tmp),
  ...f64x2.promoteLow,
  ...get(acc),
  ...f64x2.add,
  ...get(tmp),
  ...get(tmp),
  ...shuffle(HIGH_HALF),
  ...f64x2.promoteLow,
  ...f64x2.add,
  ...set(acc),
];

// exp over the vocabulary as 2^y, y = (x − shift)·scale·log2 e, f32x4: y = k + f with k an integer
// and |f| ≤ 1/2, 2^f by a degree-5 minimax polynomial with its constant term set to exactly 1 (so
// the most likely token weighs exactly 1; relative error 2.6e-7 after float32 rounding), 2^k added
// into the exponent bits. scale·log2 e is split into a float32 and
// its remainder so that its rounding leaves no error that grows with |y|. x is first clamped to
// `low` (≥ 86 nats below the shift), so k ≥ −125 and every lane is finite (NaN and −Infinity
// included); the caller masks those lanes where a weight must be exactly 0.
const ROUNDING_MAGIC = 12582912; // 1.5 · 2^23: adding it rounds to an integer in the low bits
const EXP2_MINIMAX = [
  1, 0.6931469440460205, 0.24022114276885986, 0.05550709739327431, 0.009675757959485054,
  0.0013277939287945628,
];

/** How far below its shift (in nats at scale 1) the exp kernels clamp a logit: k stays ≥ −125. */
export const FLOOR_NATS = 86;

/** blockStats skips a block whose maximum lies this many nats below the largest logit so far:
 * each of its tokens weighs under e^−40 of the most likely one, so all skipped tokens together
 * change the normaliser by less than V·e^−40 (7e-13 relative at 151,936 tokens) and the
 * entropy by less than V·e^−40·(40 + ln V) (4e-11 nats), as −p·ln p grows with p below 1/e.
 * In a peaked distribution (a real model's, often) most blocks lie that far down, and their
 * exponentials are never computed. */
export const SKIP_NATS = 40;

/** v128 constants live in a table at the start of memory (written by the module's data
 * segment) and are loaded where used: TurboFan rebuilds a v128.const, or a local holding one,
 * from immediates on every use (three instructions), a load is one. */
class ConstantTable {
  private readonly values: number[][] = [];
  /** Loads the constant (16 bytes) onto the stack. */
  load(bytes: number[]): number[] {
    const key = bytes.join(",");
    let i = this.values.findIndex((v) => v.join(",") === key);
    if (i < 0) i = this.values.push(bytes) - 1;
    if (16 * this.values.length > TABLE_BYTES) throw new Error("kernel constant table is full");
    return [...i32c(0), ...vload(16 * i)];
  }
  f32 = (v: number) => this.load([...bytesOf(Float32Array.of(v, v, v, v))]);
  bytes(): number[] {
    return this.values.flat();
  }
}

/** Bytes at the start of memory reserved for the kernels' constants. */
const TABLE_BYTES = 256;
const constants = new ConstantTable();

/** Parameter vectors of the exp kernels, written (each float in all four lanes) by the caller
 * right after the constant table: loaded where used like the constants, so that TurboFan keeps
 * no splatted value live across the loop (it spilled them and re-broadcast them every vector). */
export const EXP_SHIFT = 0;
export const EXP_LOW = 1;
export const EXP_HI = 2;
export const EXP_LO = 3;
export const EXP_CUT = 4;
const PARAM_VECTORS = 5;
const param = (i: number) => [...i32c(0), ...vload(TABLE_BYTES + 16 * i)];

/** Bytes at the start of memory reserved for the kernels' constants and parameters: callers
 * put their buffers after them and write parameter i at PARAMS_AT + 16·i. */
export const PARAMS_AT = TABLE_BYTES;
export const CONSTANT_BYTES = TABLE_BYTES + 16 * PARAM_VECTORS;

/** Locals of one lane group of the exp: the clamped x − shift, scratch vectors, and e, the
 * result. */
interface ExpLocals {
  dx: number;
  t: number;
  f: number;
  f2: number;
  a: number;
  e: number;
}

/** Where an exp kernel gets its operands: `c` pushes a constant vector, the others push the
 * parameter vectors (from memory, or constants where the kernel fixes them). */
interface ExpOperands {
  c: (v: number) => number[];
  /** The clamp; null where the caller knows every x lies within FLOOR_NATS of the shift. */
  low: number[] | null;
  shift: number[];
  hi: number[];
  lo: number[];
}

/** Constant vectors kept in locals, loaded once from the table at the start of a kernel: in a
 * loop TurboFan keeps them in registers (a v128.const would be rebuilt from immediates at every
 * use, a table load is one memory operation per use). */
class ConstantLocals {
  private readonly slots = new Map<number, number>();
  constructor(private readonly allocate: () => number) {}
  /** Pushes the constant with v in every f32 lane. */
  readonly c = (v: number): number[] => {
    let slot = this.slots.get(v);
    if (slot === undefined) this.slots.set(v, (slot = this.allocate()));
    return get(slot);
  };
  /** The locals' types, in allocation order. */
  types(): number[] {
    return [...this.slots].map(() => V128);
  }
  /** Code that fills the locals (run it first). */
  init(): number[] {
    return [...this.slots].flatMap(([v, slot]) => [...constants.f32(v), ...set(slot)]);
  }
}

/** Vectors computed side by side in one iteration of an exp kernel, their statements
 * interleaved so that each long dependency chain (~17 operations per vector) has independent
 * work beside it. Measured at 151,936 tokens, in one process: 4 groups take the statistics pass
 * from 0.225 to 0.205 ms and the weights pass from 0.183 to 0.175 (2 groups: no gain); the
 * results are bit for bit those of one vector at a time (same operations, same summing order). */
const GROUPS = 4;

/** Fresh locals for one lane group. */
const expLocals = (local: () => number): ExpLocals => ({
  dx: local(),
  t: local(),
  f: local(),
  f2: local(),
  a: local(),
  e: local(),
});

/** Statements (each leaves the stack empty) that compute e = 2^((x − shift)·(hi + lo)) for the
 * vector at p + offset into `e`; `dx` keeps x − shift (clamped to low, so finite). */
function exp2Steps(
  offset: number,
  p: number,
  { dx, t, f, f2, a, e }: ExpLocals,
  { c, low, shift, hi, lo }: ExpOperands,
): number[][] {
  const term = (i: number) => [
    ...c(EXP2_MINIMAX[i]!),
    ...get(f),
    ...c(EXP2_MINIMAX[i + 1]!),
    ...f32x4.mul,
    ...f32x4.add,
  ];
  return [
    // dx = max(x, low) − shift; y = dx·hi (in f), rounded to t's low mantissa bits.
    low
      ? [...low, ...get(p), ...vload(offset), ...f32x4.pmax, ...shift, ...f32x4.sub, ...set(dx)]
      : [...get(p), ...vload(offset), ...shift, ...f32x4.sub, ...set(dx)],
    [...get(dx), ...hi, ...f32x4.mul, ...set(f)],
    [...get(f), ...c(ROUNDING_MAGIC), ...f32x4.add, ...set(t)],
    [...get(dx), ...lo, ...f32x4.mul, ...set(a)],
    // f = (y − k) + dx·lo, in [−1/2, 1/2] up to the tiny correction. k = nearest(y) rounds half
    // to even as t's addition does, so it is t's integer; one rounding instruction instead of
    // subtracting the magic back shortens the dependency chain (same bits, 3% faster).
    [...get(f), ...get(f), ...f32x4.nearest, ...f32x4.sub, ...get(a), ...f32x4.add, ...set(f)],
    [...get(f), ...get(f), ...f32x4.mul, ...set(f2)],
    // Estrin: (c0 + c1 f) + f²((c2 + c3 f) + f²(c4 + c5 f)) keeps the dependency chain short.
    [...term(0), ...set(a)],
    [...term(2), ...get(f2), ...term(4), ...f32x4.mul, ...f32x4.add, ...set(e)],
    // × 2^k: t's low mantissa bits hold k, so bits(t) << 23 is k in the exponent field (the bits
    // above wrap away), added to the polynomial's bits.
    [
      ...get(a),
      ...get(e),
      ...get(f2),
      ...f32x4.mul,
      ...f32x4.add,
      ...get(t),
      ...i32c(23),
      ...i32x4.shl,
      ...i32x4.add,
      ...set(e),
    ],
  ];
}

/** The statements of several lane groups, interleaved: first statement of each, then second… */
function interleave(groups: number[][][]): number[] {
  const out: number[] = [];
  const longest = Math.max(...groups.map((g) => g.length));
  for (let i = 0; i < longest; i++) for (const g of groups) if (i < g.length) out.push(...g[i]!);
  return out;
}

/** Vectors whose weights are summed in float32 before one float64 accumulation: at most eight
 * roundings per lane (< 5e-7 relative, and they do not add up across chunks: independent
 * signs), for one promotion per CHUNK vectors instead of one per vector. */
const CHUNK = 8;

/**
 * `expWeights`: 2^((x − shift)·(hi + lo)) over n floats at p (n a multiple of BLOCK), x
 * clamped to `low`; the parameters are read from memory (EXP_* at PARAMS_AT). Tokens below
 * `cut` (which the caller keeps ≥ low: masked, NaN, more than 86 nats down included) weigh
 * exactly 0. Stores each weight to out, each block's Σe to sums[2 + block] and Σe to sums[0].
 */
function expWeightsKernel(): KernelFn {
  const [p, n, out, sums] = [0, 1, 2, 3];
  let next = 4;
  const local = () => next++;
  const [end, blockEnd, chunkEnd, blockPtr] = [local(), local(), local(), local()];
  const [zBlock, blockSum] = [local(), local()];
  const [z, tmp, zf] = [local(), local(), local()];
  const groups = Array.from({ length: GROUPS }, () => expLocals(local));
  const held = new ConstantLocals(local);
  const operands: ExpOperands = {
    c: held.c,
    low: param(EXP_LOW),
    shift: param(EXP_SHIFT),
    hi: param(EXP_HI),
    lo: param(EXP_LO),
  };
  const vector = [
    ...interleave(
      groups.map((lane, g) => [
        ...exp2Steps(16 * g, p, lane, operands),
        [
          ...get(p),
          ...vload(16 * g),
          ...param(EXP_CUT),
          ...f32x4.ge,
          ...get(lane.e),
          ...v128.and,
          ...set(lane.e),
        ],
        [...get(out), ...get(lane.e), ...vstoreAt(16 * g)],
      ]),
    ),
    // Summed in order, as one vector at a time would.
    ...groups.flatMap((lane) => [...get(zf), ...get(lane.e), ...f32x4.add, ...set(zf)]),
    ...advance(out, GROUPS),
  ];
  const zero = (v: number) => [...f64c(0), ...f64x2.splat, ...set(v)];
  const chunks = eachBlock(
    p,
    blockEnd,
    chunkEnd,
    [...eachVector(p, chunkEnd, vector, GROUPS), ...get(zf), ...accumulate64(tmp, z), ...zero(zf)],
    CHUNK * 16,
  );
  const body = [
    ...held.init(),
    ...endOf(p, n, end),
    ...get(sums),
    ...set(blockPtr),
    ...zero(zf),
    ...eachBlock(p, end, blockEnd, [
      ...zero(z),
      ...chunks,
      ...sumLanes64(z),
      ...storeBlockSum(blockPtr, zBlock, blockSum),
    ]),
    ...get(sums),
    ...get(zBlock),
    ...op.f64Store,
  ];
  return {
    name: "expWeights",
    params: [I32, I32, I32, I32],
    results: [],
    locals: [
      I32,
      I32,
      I32,
      I32,
      F64,
      F64,
      ...Array.from({ length: 3 + 6 * GROUPS }, () => V128),
      ...held.types(),
    ],
    body,
  };
}

/**
 * Upper bounds of the weights 2^y, y = (x − shift)·scale·log2 e, for drawing by rejection: the
 * float whose bits are (y + 127)·2^23 is 2^k·(1 + f) (k = ⌊y⌋, f = y − k), the chord of 2^y,
 * which lies above it and at most 6.2% over. `a` = scale·log2 e·2^23 and `b` = 127·2^23 plus a
 * margin for the roundings of the three float32 operations; the saturating conversion turns
 * NaN, −Infinity and everything below 2^−127 into 0. Stores each bound to out, each block's Σ (f32 within the block) to sums[2 + block], the total (f64) to
 * sums[0].
 */
function boundsKernel(): KernelFn {
  const [p, n, shift, a, b, out, sums] = [0, 1, 2, 3, 4, 5, 6];
  const [end, blockEnd, blockPtr, total, blockSum, vShift, vA, vB, acc, x, vZero] = [
    7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17,
  ];
  const vector = [
    ...get(out),
    ...get(vZero),
    ...get(p),
    ...vload(),
    ...tee(x),
    ...get(vShift),
    ...f32x4.sub,
    ...get(vA),
    ...f32x4.mul,
    ...get(vB),
    ...f32x4.add,
    ...f32x4.pmax, // max(0, u): NaN and everything below 2^−127 become 0
    ...f32x4.truncSat,
    ...tee(x),
    ...vstore,
    ...get(acc),
    ...get(x),
    ...f32x4.add,
    ...set(acc),
    ...advance(out),
  ];
  const lanesSum = [
    ...get(acc),
    ...f32x4.lane(0),
    ...get(acc),
    ...f32x4.lane(1),
    0x92, // f32.add
    ...get(acc),
    ...f32x4.lane(2),
    ...get(acc),
    ...f32x4.lane(3),
    0x92,
    0x92,
    0xbb, // f64.promote_f32
  ];
  return {
    name: "bounds",
    params: [I32, I32, F32, F32, F32, I32, I32],
    results: [],
    locals: [I32, I32, I32, F64, F64, V128, V128, V128, V128, V128, V128],
    body: [
      ...endOf(p, n, end),
      ...splatInto(shift, vShift),
      ...splatInto(a, vA),
      ...splatInto(b, vB),
      ...get(sums),
      ...set(blockPtr),
      ...eachBlock(p, end, blockEnd, [
        ...f32c(0),
        ...f32x4.splat,
        ...set(acc),
        ...eachVector(p, blockEnd, vector),
        ...lanesSum,
        ...storeBlockSum(blockPtr, total, blockSum),
      ]),
      ...get(sums),
      ...get(total),
      ...op.f64Store,
    ],
  };
}

/** Writes the index of every float at p in [threshold, below) to out (n a multiple of 16);
 * returns how many. Four vectors per step give a 16-bit lane mask, whose set bits are listed
 * lowest first (count trailing zeros, clear the lowest bit): a few instructions per hit and
 * one branch per four vectors, instead of a scalar reload and compare of every lane (the
 * nucleus's edge collects thousands of tokens spread one or two per vector; one vector per
 * step took 0.07 ms at 151,936 tokens for 3,000 hits, four 0.04). `masking` (maskCollect):
 * the same pass also replaces every float below `threshold` with `value`, and writes each
 * listed token's float to outX and its weight (the float at its address + weightsDelta) to
 * outW, for logit_top_p, whose edge lies among those listed: then it is found in contiguous
 * arrays (reading 2,000 weights scattered over the vocabulary took ~7 µs, and a selection
 * over them ~25). */
function collectKernel(masking: boolean): KernelFn {
  const [p, n, threshold, below, out] = [0, 1, 2, 3, 4];
  const [value, weightsDelta, outW, outX] = [5, 6, 7, 8]; // maskCollect only
  let next = masking ? 9 : 5;
  const local = () => next++;
  const [end, count, base, bits, lane, touched] = [
    local(),
    local(),
    local(),
    local(),
    local(),
    local(),
  ];
  const [vThreshold, vBelow, vValue] = [local(), local(), local()];
  const xs = [local(), local(), local(), local()];
  /** array + 4·count, the address of the hit's entry in an output array. */
  const slot = (array: number) => [...get(array), ...get(count), ...i32c(2), op.i32Shl, op.i32Add];
  const listLanes = [
    // do { out[count++] = (p − base) / 4 + ctz(bits); bits &= bits − 1 } while (bits);
    // maskCollect keeps the lane's address, lane = p + 4·ctz(bits), to copy its floats
    ...op.loop,
    ...(masking
      ? [
          ...get(p),
          ...get(bits),
          0x68, // i32.ctz
          ...i32c(2),
          op.i32Shl,
          op.i32Add,
          ...set(lane),
          ...slot(out),
          ...get(lane),
          ...get(base),
          op.i32Sub,
          ...i32c(2),
          0x76, // i32.shr_u
        ]
      : [
          // (one instruction fewer per listed token: collect lists whole blocks for top-k
          // and every token of a small vocabulary)
          ...slot(out),
          ...get(p),
          ...get(base),
          op.i32Sub,
          ...i32c(2),
          0x76, // i32.shr_u
          ...get(bits),
          0x68, // i32.ctz
          op.i32Add,
        ]),
    ...op.i32Store,
    ...(masking
      ? [
          ...slot(outX),
          ...get(lane),
          ...op.f32Load,
          ...op.f32Store,
          ...slot(outW),
          ...get(lane),
          ...get(weightsDelta),
          op.i32Add,
          ...op.f32Load,
          ...op.f32Store,
        ]
      : []),
    ...get(count),
    ...i32c(1),
    op.i32Add,
    ...set(count),
    ...get(bits),
    ...get(bits),
    ...i32c(1),
    op.i32Sub,
    0x71, // i32.and
    ...tee(bits),
    ...op.brIf(0),
    ...op.end,
  ];
  // bits = Σ bitmask(threshold ≤ x_g < below) << 4g over the step's four vectors
  const laneBits = xs.flatMap((x, g) => [
    ...get(p),
    ...vload(16 * g),
    ...tee(x),
    ...get(vThreshold),
    ...f32x4.ge,
    ...get(x),
    ...get(vBelow),
    ...f32x4.lt,
    ...v128.and,
    ...i32x4.bitmask,
    ...(g > 0 ? [...i32c(4 * g), op.i32Shl, 0x72 /* i32.or */] : []),
  ]);
  return {
    name: masking ? "maskCollect" : "collect",
    params: masking ? [I32, I32, F32, F32, I32, F32, I32, I32, I32] : [I32, I32, F32, F32, I32],
    results: [I32],
    locals: [I32, I32, I32, I32, I32, I32, V128, V128, V128, ...xs.map(() => V128)],
    body: [
      ...splatInto(threshold, vThreshold),
      ...splatInto(below, vBelow),
      ...(masking ? splatInto(value, vValue) : []),
      ...startScan(p, n, end, base),
      ...eachVector(
        p,
        end,
        [
          // maskCollect: one load from the step's cache line of weights, so that the pass
          // streams the weights too and a listed token's weight is in cache (a load that
          // missed cost ~8 ns per listed token).
          ...(masking
            ? [
                ...get(touched),
                ...get(p),
                ...get(weightsDelta),
                op.i32Add,
                ...op.i32Load,
                0x73 /* i32.xor */,
                ...set(touched),
              ]
            : []),
          ...laneBits,
          ...tee(bits),
          ...op.if,
          ...listLanes,
          ...op.end,
          ...(masking ? xs.flatMap((x, g) => maskVector(p, x, vThreshold, vValue, 16 * g)) : []),
        ],
        4,
      ),
      ...get(count),
      // The weights loaded only to be in cache: combined into the result as 0, so that no
      // compiler drops the loads.
      ...(masking ? [...get(touched), ...get(touched), 0x73, op.i32Add] : []),
    ],
  };
}

/** Vectors per step of the summing kernels, each into its own float32 sum: one vector per
 * step left the passes bound by the chain of additions (massAbove 0.027 → 0.017 ms at 151,936
 * tokens with four). */
const SUM_LANES = 4;

/**
 * `for (ptr < end) acc64 += value(0) + … + value(3)`, four vectors per step, where `value(g)`
 * leaves the f32x4 of the vector at ptr + 16·g on the stack; `advance` moves the other
 * pointers by four vectors. Each of the four is summed in float32 over a chunk of CHUNK
 * vectors (two steps), the four added, and that accumulated in float64. Then the two lanes of
 * acc64 are added onto the stack. n must be a multiple of 16 floats.
 */
function chunkedSum(
  ptr: number,
  end: number,
  chunkEnd: number,
  value: (g: number) => number[],
  advanceOthers: number[],
  acc32: number[],
  acc64: number,
  tmp: number,
): number[] {
  return [
    ...f64c(0),
    ...f64x2.splat,
    ...set(acc64),
    ...eachBlock(
      ptr,
      end,
      chunkEnd,
      [
        ...acc32.flatMap((a) => [...f32c(0), ...f32x4.splat, ...set(a)]),
        ...eachVector(
          ptr,
          chunkEnd,
          [
            ...acc32.flatMap((a, g) => [...get(a), ...value(g), ...f32x4.add, ...set(a)]),
            ...advanceOthers,
          ],
          SUM_LANES,
        ),
        ...combine4(acc32, f32x4.add),
        ...accumulate64(tmp, acc64),
      ],
      CHUNK * 16,
      true,
    ),
    ...sumLanes64(acc64),
  ];
}

/** Σ weight (f64) over the tokens whose logit is ≥ threshold: logits at p, weights at w. */
function massAboveKernel(): KernelFn {
  const [p, w, n, threshold, end, chunkEnd, vThreshold, acc64, tmp] = [0, 1, 2, 3, 4, 5, 6, 7, 8];
  const acc32 = [9, 10, 11, 12];
  return {
    name: "massAbove",
    params: [I32, I32, I32, F32],
    results: [F64],
    locals: [I32, I32, V128, V128, V128, ...acc32.map(() => V128)],
    body: [
      ...splatInto(threshold, vThreshold),
      ...endOf(p, n, end),
      ...chunkedSum(
        p,
        end,
        chunkEnd,
        (g) => [
          ...get(w),
          ...vload(16 * g),
          ...get(p),
          ...vload(16 * g),
          ...get(vThreshold),
          ...f32x4.ge,
          ...v128.and,
        ],
        advance(w, SUM_LANES),
        acc32,
        acc64,
        tmp,
      ),
    ],
  };
}

/** Σ |a − b| (f64) over n floats at a and b (n a multiple of 16). */
function absDiffKernel(): KernelFn {
  const [a, b, n, end, chunkEnd, acc64, tmp] = [0, 1, 2, 3, 4, 5, 6];
  const acc32 = [7, 8, 9, 10];
  return {
    name: "absDiff",
    params: [I32, I32, I32],
    results: [F64],
    locals: [I32, I32, V128, V128, ...acc32.map(() => V128)],
    body: [
      ...endOf(a, n, end),
      ...chunkedSum(
        a,
        end,
        chunkEnd,
        (g) => [
          ...get(a),
          ...vload(16 * g),
          ...get(b),
          ...vload(16 * g),
          ...f32x4.sub,
          ...f32x4.abs,
        ],
        advance(b, SUM_LANES),
        acc32,
        acc64,
        tmp,
      ),
    ],
  };
}

/** The largest float of each block of BLOCK at p (n a multiple of BLOCK) into out, NaN ignored;
 * returns the largest of all. One pass that also answers argmax (scan the best block) and
 * bounds for top-k (the k-th largest block maximum). */
function blockMaxKernel(): KernelFn {
  const [p, n, out, end, blockEnd, acc, all] = [0, 1, 2, 3, 4, 5, 6];
  return {
    name: "blockMax",
    params: [I32, I32, I32],
    results: [F32],
    locals: [I32, I32, V128, V128],
    body: [
      ...endOf(p, n, end),
      ...f32c(-Infinity),
      ...f32x4.splat,
      ...set(all),
      ...eachBlock(p, end, blockEnd, [
        ...f32c(-Infinity),
        ...f32x4.splat,
        ...set(acc),
        ...eachVector(p, blockEnd, [
          ...get(acc),
          ...get(p),
          ...vload(),
          ...f32x4.pmax,
          ...set(acc),
        ]),
        ...get(out),
        ...horizontalMax(acc),
        ...op.f32Store,
        ...get(all),
        ...get(acc),
        ...f32x4.pmax,
        ...set(all),
        ...get(out),
        ...i32c(4),
        op.i32Add,
        ...set(out),
      ]),
      ...horizontalMax(all),
    ],
  };
}

/**
 * The entropy's sum over weights written elsewhere (llama.cpp's exp kernel): Σ w·(x − shift)
 * (float64, float32 within chunks of CHUNK vectors) over n floats, logits at p and weights at
 * w. `clamped`: x is first raised to `low`, so that −Infinity (the padding, masked tokens),
 * which weighs 0, adds 0 instead of 0·−Infinity = NaN; unclamped (one operation of six fewer
 * per vector) is for stretches without −Infinity, and says NaN where there is one.
 */
function weightedSumKernel(clamped: boolean): KernelFn {
  const [p, w, n, shift, low] = [0, 1, 2, 3, 4];
  const [end, chunkEnd] = [5, 6];
  const [vShift, vLow, acc64, tmp] = [7, 8, 9, 10];
  // Four vectors per step, each with its own float32 sum, so that no chain holds the loads back.
  const sums = [11, 12, 13, 14];
  const step = sums.flatMap((acc, g) => [
    ...(clamped ? get(vLow) : []),
    ...get(p),
    ...vload(16 * g),
    ...(clamped ? f32x4.pmax : []), // max(low, x): NaN becomes low as well
    ...get(vShift),
    ...f32x4.sub,
    ...get(w),
    ...vload(16 * g),
    ...f32x4.mul,
    ...get(acc),
    ...f32x4.add,
    ...set(acc),
  ]);
  const zero = (v: number) => [...f64c(0), ...f64x2.splat, ...set(v)];
  return {
    name: clamped ? "weightedSumClamped" : "weightedSum",
    params: [I32, I32, I32, F32, F32],
    results: [F64],
    locals: [I32, I32, ...Array.from({ length: 8 }, () => V128)],
    body: [
      ...splatInto(shift, vShift),
      ...splatInto(low, vLow),
      ...endOf(p, n, end),
      ...zero(acc64),
      ...eachBlock(
        p,
        end,
        chunkEnd,
        [
          ...sums.flatMap((acc) => [...f32c(0), ...f32x4.splat, ...set(acc)]),
          ...eachVector(p, chunkEnd, [...step, ...advance(w, 4)], 4),
          ...combine4(sums, f32x4.add),
          ...accumulate64(tmp, acc64),
        ],
        CHUNK * 16,
      ),
      ...sumLanes64(acc64),
    ],
  };
}

/** x ← x · r over n floats, multiplied in f64 and rounded once to float32. */
function scaleKernel(): KernelFn {
  const [p, n, t, end, x, vt] = [0, 1, 2, 3, 4, 5];
  const half = (high: boolean) => [
    ...get(x),
    ...(high ? [...get(x), ...shuffle(HIGH_HALF)] : []),
    ...f64x2.promoteLow,
    ...get(vt),
    ...f64x2.mul,
    ...f32x4.demoteZero,
  ];
  return {
    name: "scale",
    params: [I32, I32, F64],
    results: [],
    locals: [I32, V128, V128],
    body: [
      ...endOf(p, n, end),
      ...splatInto(t, vt, f64x2.splat),
      ...eachVector(p, end, [
        ...get(p),
        ...get(p),
        ...vload(),
        ...set(x),
        ...half(false),
        ...half(true),
        ...shuffle(JOIN_LOW_HALVES),
        ...vstore,
      ]),
    ],
  };
}

/** x ← value where x < bound, over n floats. */
function maskBelowKernel(): KernelFn {
  const [p, n, bound, value, end, x, vBound, vValue] = [0, 1, 2, 3, 4, 5, 6, 7];
  return {
    name: "maskBelow",
    params: [I32, I32, F32, F32],
    results: [],
    locals: [I32, V128, V128, V128],
    body: [
      ...endOf(p, n, end),
      ...splatInto(bound, vBound),
      ...splatInto(value, vValue),
      ...eachVector(p, end, [
        ...get(p),
        ...vload(),
        ...set(x),
        ...maskVector(p, x, vBound, vValue),
      ]),
    ],
  };
}

/**
 * Block maxima and softmax statistics in one pass: for each block of BLOCK floats at p (n a
 * multiple of BLOCK), its largest float (NaN ignored) to maxOut, then, while the block is in
 * L1, Σe and Σe·d (float64) to sums, two per block, with e = exp(d) and d = x − the block's
 * maximum; tokens 85.5 nats or more below it (NaN and −Infinity too) weigh 0. A block whose
 * maximum lies SKIP_NATS or more below the largest so far, or holds nothing finite, gets zero
 * sums without an exponential: each of its tokens weighs under e^−40 of the most likely one.
 * Returns the largest float of all; the caller rescales each block's sums to it.
 */
function blockStatsKernel(): KernelFn {
  const [p, n, maxOut, sums] = [0, 1, 2, 3];
  let next = 4;
  const local = () => next++;
  const [end, blockEnd, chunkEnd, q] = [local(), local(), local(), local()];
  const [m, all] = [local(), local()];
  const vectors = Array.from({ length: 8 }, local);
  const [acc0, acc1, acc2, acc3, z, w, zf, wf] = vectors as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const e = local();
  const groups = Array.from({ length: GROUPS }, () => expLocals(local));
  const [least, sumCheck, x] = [local(), local(), local()];
  const minima = [local(), local(), local(), local()];
  const held = new ConstantLocals(local);
  const hi = Math.fround(Math.LOG2E);
  const operands: ExpOperands = {
    c: held.c,
    low: param(EXP_LOW),
    shift: param(EXP_SHIFT),
    hi: held.c(hi),
    lo: held.c(Math.LOG2E - hi),
  };
  const accumulators = [acc0, acc1, acc2, acc3];
  const blockMax = [
    ...accumulators.flatMap((a) => [...f32c(-Infinity), ...f32x4.splat, ...set(a)]),
    ...minima.flatMap((a) => [...f32c(Infinity), ...f32x4.splat, ...set(a)]),
    ...get(p),
    ...set(q),
    // Four independent maxima per step, so that the pass runs at load speed.
    ...eachBlock(
      q,
      blockEnd,
      chunkEnd,
      [
        ...accumulators.flatMap((a, i) => [
          ...get(q),
          ...vload(16 * i),
          ...set(x),
          ...get(a),
          ...get(x),
          ...f32x4.pmax,
          ...set(a),
          ...get(minima[i]!),
          ...get(x),
          ...f32x4.pmin,
          ...set(minima[i]!),
        ]),
        ...get(chunkEnd),
        ...set(q),
      ],
      64,
    ),
    ...combine4(accumulators, f32x4.pmax),
    ...set(acc0),
    ...horizontalMax(acc0),
    ...set(m),
    ...combine4(minima, f32x4.pmin),
    ...set(x),
    ...horizontalMin(x),
    ...set(least),
    ...get(maxOut),
    ...get(m),
    ...op.f32Store,
    ...get(all),
    ...get(m),
    op.f32Max,
    ...set(all),
  ];
  const vector = (clamped: boolean) => [
    ...interleave(
      groups.map((lane, g) => [
        ...exp2Steps(16 * g, p, lane, clamped ? operands : { ...operands, low: null }),
        // Clamped lanes (masked, NaN, far down) weigh exactly 0, so a one-hot has entropy 0.
        ...(clamped
          ? [
              [
                ...get(lane.e),
                ...get(lane.dx),
                ...held.c(-(FLOOR_NATS - 0.5)),
                ...f32x4.gt,
                ...v128.and,
                ...set(lane.e),
              ],
            ]
          : []),
      ]),
    ),
    // Summed in order, as one vector at a time would.
    ...groups.flatMap((lane) => [
      ...get(zf),
      ...get(lane.e),
      ...f32x4.add,
      ...set(zf),
      ...get(lane.e),
      ...get(lane.dx),
      ...f32x4.mul,
      ...get(wf),
      ...f32x4.add,
      ...set(wf),
    ]),
  ];
  const zero = (v: number) => [...f64c(0), ...f64x2.splat, ...set(v)];
  const flush = (from: number, into: number) => [
    ...get(from),
    ...accumulate64(e, into),
    ...zero(from),
  ];
  const splatParam = (i: number, value: number[]) => [
    ...i32c(0),
    ...value,
    ...f32x4.splat,
    ...vstoreAt(TABLE_BYTES + 16 * i),
  ];
  const sumsOfBlock = (clamped: boolean) => [
    ...zero(z),
    ...zero(w),
    ...eachBlock(
      p,
      blockEnd,
      chunkEnd,
      [...eachVector(p, chunkEnd, vector(clamped), GROUPS), ...flush(zf, z), ...flush(wf, w)],
      CHUNK * 16,
    ),
    ...get(sums),
    ...sumLanes64(z),
    ...op.f64Store,
    ...get(sums),
    ...sumLanes64(w),
    ...op.f64StoreAt(8),
  ];
  // Most blocks of a real distribution lie within FLOOR_NATS of their maximum: then no lane
  // needs the clamp or the mask (the same bits without them, three operations fewer per
  // vector). A NaN, which the minimum does not see, leaves NaN sums: that block is summed again
  // clamped and masked.
  const expBlock = [
    ...splatParam(EXP_SHIFT, get(m)),
    ...splatParam(EXP_LOW, [...get(m), ...f32c(FLOOR_NATS), op.f32Sub]),
    ...get(least),
    ...get(m),
    op.f32Sub,
    ...f32c(-(FLOOR_NATS - 0.5)),
    op.f32Gt,
    ...op.if,
    ...sumsOfBlock(false),
    ...get(sums),
    ...op.f64Load,
    ...tee(sumCheck),
    ...get(sumCheck),
    op.f64Ne,
    ...op.if,
    ...get(blockEnd),
    ...i32c(BLOCK * 4),
    op.i32Sub,
    ...set(p),
    ...sumsOfBlock(true),
    ...op.end,
    op.else,
    ...sumsOfBlock(true),
    ...op.end,
  ];
  const skipBlock = [
    ...get(sums),
    ...f64c(0),
    ...op.f64Store,
    ...get(sums),
    ...f64c(0),
    ...op.f64StoreAt(8),
    ...get(blockEnd),
    ...set(p),
  ];
  return {
    name: "blockStats",
    params: [I32, I32, I32, I32],
    results: [F32],
    locals: [
      I32,
      I32,
      I32,
      I32,
      F32,
      F32,
      ...vectors.map(() => V128),
      ...Array.from({ length: 1 + 6 * GROUPS }, () => V128),
      F32,
      F64,
      V128,
      ...minima.map(() => V128),
      ...held.types(),
    ],
    body: [
      ...held.init(),
      ...endOf(p, n, end),
      ...zero(zf),
      ...zero(wf),
      ...f32c(-Infinity),
      ...set(all),
      ...eachBlock(p, end, blockEnd, [
        ...blockMax,
        // m > all − SKIP_NATS (false for −Infinity and NaN-free empty blocks)
        ...get(m),
        ...get(all),
        ...f32c(SKIP_NATS),
        op.f32Sub,
        op.f32Gt,
        ...op.if,
        ...expBlock,
        op.else,
        ...skipBlock,
        ...op.end,
        ...get(maxOut),
        ...i32c(4),
        op.i32Add,
        ...set(maxOut),
        ...get(sums),
        ...i32c(16),
        op.i32Add,
        ...set(sums),
      ]),
      ...get(all),
    ],
  };
}

export const KERNELS: readonly KernelFn[] = [
  blockMaxKernel(),
  blockStatsKernel(),
  expWeightsKernel(),
  boundsKernel(),
  collectKernel(false),
  collectKernel(true),
  massAboveKernel(),
  absDiffKernel(),
  scaleKernel(),
  maskBelowKernel(),
  weightedSumKernel(false),
  weightedSumKernel(true),
];

function section(out: number[], id: number, content: number[]): void {
  out.push(id, ...u32(content.length), ...content);
}

function name(s: string): number[] {
  const b = [...Buffer.from(s, "utf8")];
  return [...u32(b.length), ...b];
}

/** The module: imports its memory ("env", "memory"), exports each kernel by name. */
export function encodeKernelModule(): Uint8Array {
  const out = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
  const types: number[] = [...u32(KERNELS.length)];
  for (const f of KERNELS)
    types.push(0x60, ...u32(f.params.length), ...f.params, ...u32(f.results.length), ...f.results);
  section(out, 1, types);
  section(out, 2, [...u32(1), ...name("env"), ...name("memory"), 0x02, 0x00, ...u32(1)]);
  section(out, 3, [...u32(KERNELS.length), ...KERNELS.flatMap((_, i) => u32(i))]);
  section(out, 7, [
    ...u32(KERNELS.length),
    ...KERNELS.flatMap((f, i) => [...name(f.name), 0x00, ...u32(i)]),
  ]);
  const code: number[] = [...u32(KERNELS.length)];
  for (const f of KERNELS) {
    const body = [...u32(f.locals.length), ...f.locals.flatMap((t) => [1, t]), ...f.body, 0x0b];
    code.push(...u32(body.length), ...body);
  }
  section(out, 10, code);
  // The constant table: one active segment at address 0 of the imported memory.
  const table = constants.bytes();
  section(out, 11, [...u32(1), 0x00, ...i32c(0), 0x0b, ...u32(table.length), ...table]);
  return Uint8Array.from(out);
}
