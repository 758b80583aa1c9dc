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
const vi32 = (v: number) => [
  ...simd(0x0c),
  ...[...new Uint8Array(Int32Array.of(v, v, v, v).buffer)],
];
const shuffle = (lanes: number[]) => [...simd(0x0d), ...lanes];
const f32x4 = {
  splat: simd(0x13),
  lane: (i: number) => [...simd(0x1f), i],
  eq: simd(0x41),
  lt: simd(0x43),
  ge: simd(0x46),
  nearest: simd(0x6a),
  abs: simd(0xe0),
  add: simd(0xe4),
  sub: simd(0xe5),
  mul: simd(0xe6),
  pmax: simd(0xeb),
  truncSat: simd(0xf8),
  demoteZero: simd(0x5e),
};
const f64x2 = {
  splat: simd(0x14),
  lane: (i: number) => [...simd(0x21), i],
  promoteLow: simd(0x5f),
  add: simd(0xf0),
  div: simd(0xf3),
};
const i32x4 = { splat: simd(0x11), shl: simd(0xab), add: simd(0xae) };
const v128 = { and: simd(0x4e), bitselect: simd(0x52), anyTrue: simd(0x53) };
const HIGH_HALF = [8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7];
const JOIN_LOW_HALVES = [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23];
const op = {
  i32Add: 0x6a,
  i32Mul: 0x6c,
  i32GeU: 0x4f,
  i32Shl: 0x74,
  f32Max: 0x97,
  f64Add: 0xa0,
  f32Ge: 0x60,
  f32Load: [0x2a, 2, 0],
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

/** `for (; p < end; p += 16) body` over vectors; p and end are locals. */
const eachVector = (p: number, end: number, body: number[]): number[] => [
  ...op.block,
  ...op.loop,
  ...get(p),
  ...get(end),
  op.i32GeU,
  ...op.brIf(1),
  ...body,
  ...get(p),
  ...i32c(16),
  op.i32Add,
  ...set(p),
  ...op.br(0),
  ...op.end,
  ...op.end,
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

// exp(d) for d in [−87.3, 0], f32x4: d = k·ln2 + r with |r| ≤ ln2/2, exp(r) by its Taylor series
// to degree 7 (truncation < 6e-9 relative), 2^k through the exponent bits. Cody–Waite split of
// ln2 keeps r within an ulp.
const EXP_FLOOR = -87.3;
const LN2_HI = 0.693359375;
const LN2_LO = -2.1219444e-4;
const ROUNDING_MAGIC = 12582912; // 1.5 · 2^23
const TAYLOR = [1, 1, 1 / 2, 1 / 6, 1 / 24, 1 / 120, 1 / 720, 1 / 5040];

/** v128 constants held in locals from `first` on, set once before the loop: V8 rebuilds a
 * v128.const on every use, a local it keeps in a register or one load away. */
class ConstantPool {
  private readonly values: number[][] = [];
  constructor(private readonly first: number) {}
  get(bytes: number[]): number[] {
    const key = bytes.join(",");
    let i = this.values.findIndex((v) => v.join(",") === key);
    if (i < 0) i = this.values.push(bytes) - 1;
    return get(this.first + i);
  }
  f32 = (v: number) => this.get(vf32(v));
  i32 = (v: number) => this.get(vi32(v));
  prologue(): number[] {
    return this.values.flatMap((v, i) => [...v, ...set(this.first + i)]);
  }
  locals(): number[] {
    return this.values.map(() => V128);
  }
}

/** Leaves exp(d) on the stack; `d` is a local holding d (clobbered), `k`, `r2`, `r4` scratch. */
function expOf(
  d: number,
  k: number,
  r2: number,
  r4: number,
  { f32: vf32, i32: vi32 }: ConstantPool,
): number[] {
  const clamped = [...vf32(EXP_FLOOR), ...get(d), ...f32x4.pmax];
  const out: number[] = [];
  // t = clamped·log2 e + 1.5·2^23 rounds to an integer in t's low mantissa bits (k = t − magic).
  out.push(...clamped, ...vf32(Math.LOG2E), ...f32x4.mul, ...vf32(ROUNDING_MAGIC), ...f32x4.add);
  out.push(...set(k));
  // r = clamped − k·LN2_HI − k·LN2_LO, kept in d for Horner.
  const kFloat = [...get(k), ...vf32(ROUNDING_MAGIC), ...f32x4.sub];
  out.push(...clamped, ...kFloat, ...vf32(LN2_HI), ...f32x4.mul, ...f32x4.sub);
  out.push(...kFloat, ...vf32(LN2_LO), ...f32x4.mul, ...f32x4.sub);
  out.push(...set(d));
  // Estrin's scheme: ((c0 + c1 r) + r²(c2 + c3 r)) + r⁴((c4 + c5 r) + r²(c6 + c7 r)) keeps the
  // dependency chain short, which is what bounds this loop.
  const pair = (i: number) => [
    ...vf32(TAYLOR[i]!),
    ...get(d),
    ...vf32(TAYLOR[i + 1]!),
    ...f32x4.mul,
    ...f32x4.add,
  ];
  out.push(...get(d), ...get(d), ...f32x4.mul, ...set(r2));
  out.push(...get(r2), ...get(r2), ...f32x4.mul, ...set(r4));
  out.push(...pair(0), ...get(r2), ...pair(2), ...f32x4.mul, ...f32x4.add);
  out.push(...pair(4), ...get(r2), ...pair(6), ...f32x4.mul, ...f32x4.add);
  out.push(...get(r4), ...f32x4.mul, ...f32x4.add);
  // × 2^k: t's low mantissa bits are k, so (bits(t) << 23) + (127 << 23) is the float 2^k
  // (the bits above wrap away; k + 127 is in 1..127 for clamped inputs).
  out.push(...get(k), ...i32c(23), ...i32x4.shl, ...vi32(127 << 23), ...i32x4.add, ...f32x4.mul);
  return out;
}

/** max over n floats at p, NaN ignored (pmax keeps the accumulator when the lane is NaN). */
function maxKernel(): KernelFn {
  const [p, n, end, acc] = [0, 1, 2, 3];
  return {
    name: "max",
    params: [I32, I32],
    results: [F32],
    locals: [I32, V128],
    body: [
      ...endOf(p, n, end),
      ...f32c(-Infinity),
      ...f32x4.splat,
      ...set(acc),
      ...eachVector(p, end, [...get(acc), ...get(p), ...vload(), ...f32x4.pmax, ...set(acc)]),
      ...get(acc),
      ...f32x4.lane(0),
      ...get(acc),
      ...f32x4.lane(1),
      op.f32Max,
      ...get(acc),
      ...f32x4.lane(2),
      ...get(acc),
      ...f32x4.lane(3),
      op.f32Max,
      op.f32Max,
    ],
  };
}

/**
 * exp((x − shift) · scale) over n floats at p (n a multiple of BLOCK), 0 for x below `cut`.
 * Writes Σe and Σe·d (f64) to sums[0] and sums[1]; with `store`, also each weight to out and
 * each block's Σe to sums[2 + block].
 */
function expKernel(name: string, store: boolean): KernelFn {
  const [p, n, shift, scale, out, sums, cut] = [0, 1, 2, 3, 4, 5, 6];
  const [end, blockEnd, blockPtr, d, k, e, z, w, tmp, zBlock] = [
    7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
  ];
  const [vShift, vScale, r2, r4, vCut, e2, tmp2] = [17, 18, 19, 20, 21, 22, 23];
  const pool = new ConstantPool(24);
  const vf32 = pool.f32;
  /** exp of the vector at p + offset, 0 where masked; the lane's d is kept in `dKeep`. */
  const expAt = (offset: number, dKeep: number) => [
    ...get(p),
    ...vload(offset),
    ...get(vCut),
    ...f32x4.ge, // mask: at or above the cut
    ...get(p),
    ...vload(offset),
    ...get(vShift),
    ...f32x4.sub,
    ...get(vScale),
    ...f32x4.mul,
    ...tee(d),
    ...vf32(EXP_FLOOR),
    ...f32x4.ge, // mask: d within range (false for NaN and −Infinity)
    ...v128.and,
    ...get(d),
    ...set(dKeep), // expOf overwrites d
    ...expOf(d, k, r2, r4, pool),
    ...v128.and,
  ];
  // Σ e·d with d clamped (−Infinity·0 would be NaN); masked lanes have e = 0.
  const weighted = (eLocal: number, dKeep: number) => [
    ...get(eLocal),
    ...vf32(EXP_FLOOR),
    ...get(dKeep),
    ...f32x4.pmax,
    ...f32x4.mul,
  ];
  // Two vectors per iteration, summed in float32 (one rounding) before the float64 sums.
  const vector = [
    ...expAt(0, tmp),
    ...set(e),
    ...expAt(16, tmp2),
    ...set(e2),
    ...(store
      ? [
          ...get(out),
          ...get(e),
          ...vstoreAt(0),
          ...get(out),
          ...get(e2),
          ...vstoreAt(16),
          ...get(out),
          ...i32c(32),
          op.i32Add,
          ...set(out),
        ]
      : []),
    ...get(e),
    ...get(e2),
    ...f32x4.add,
    ...accumulate64(k, z),
    ...(store
      ? []
      : [...weighted(e, tmp), ...weighted(e2, tmp2), ...f32x4.add, ...accumulate64(k, w)]),
    ...get(p),
    ...i32c(16),
    op.i32Add,
    ...set(p),
  ];
  const blockLoop = store
    ? [
        ...op.block,
        ...op.loop,
        ...get(p),
        ...get(end),
        op.i32GeU,
        ...op.brIf(1),
        ...get(p),
        ...i32c(BLOCK * 4),
        op.i32Add,
        ...set(blockEnd),
        ...f64c(0),
        ...f64x2.splat,
        ...set(z),
        ...eachVector(p, blockEnd, vector),
        ...get(blockPtr),
        ...sumLanes64(z),
        ...op.f64StoreAt(16),
        ...get(zBlock),
        ...sumLanes64(z),
        op.f64Add,
        ...set(zBlock),
        ...get(blockPtr),
        ...i32c(8),
        op.i32Add,
        ...set(blockPtr),
        ...op.br(0),
        ...op.end,
        ...op.end,
        ...get(sums),
        ...get(zBlock),
        ...op.f64Store,
      ]
    : [
        ...eachVector(p, end, vector),
        ...get(sums),
        ...sumLanes64(z),
        ...op.f64Store,
        ...get(sums),
        ...sumLanes64(w),
        ...op.f64StoreAt(8),
      ];
  return {
    name,
    params: [I32, I32, F32, F32, I32, I32, F32],
    results: [],
    locals: [
      ...[I32, I32, I32, V128, V128, V128, V128, V128, V128, F64, V128, V128, V128, V128, V128],
      ...[V128, V128],
      ...pool.locals(),
    ],
    body: [
      ...pool.prologue(),
      ...endOf(p, n, end),
      ...get(shift),
      ...f32x4.splat,
      ...set(vShift),
      ...get(scale),
      ...f32x4.splat,
      ...set(vScale),
      ...get(cut),
      ...f32x4.splat,
      ...set(vCut),
      ...get(sums),
      ...set(blockPtr),
      ...f64c(0),
      ...f64x2.splat,
      ...tee(z),
      ...set(w),
      ...blockLoop,
    ],
  };
}

/** Writes the index of every float at p in [threshold, below) to out; returns how many. */
function collectKernel(): KernelFn {
  const [p, n, threshold, below, out] = [0, 1, 2, 3, 4];
  const [end, count, base, lane, at, vThreshold, vBelow, x] = [5, 6, 7, 8, 9, 10, 11, 12];
  const laneCheck = [
    // for (lane = 0; lane < 4; lane++) if (threshold <= p[lane] < below) out[count++] = index
    ...i32c(0),
    ...set(lane),
    ...op.loop,
    ...get(p),
    ...get(lane),
    ...i32c(2),
    op.i32Shl,
    op.i32Add,
    ...tee(at),
    ...op.f32Load,
    ...tee(x),
    ...get(threshold),
    op.f32Ge,
    ...get(x),
    ...get(below),
    0x5d, // f32.lt
    0x71, // i32.and
    ...op.if,
    ...get(out),
    ...get(count),
    ...i32c(2),
    op.i32Shl,
    op.i32Add,
    ...get(at),
    ...get(base),
    0x6b, // i32.sub
    ...i32c(2),
    0x76, // i32.shr_u
    ...op.i32Store,
    ...get(count),
    ...i32c(1),
    op.i32Add,
    ...set(count),
    ...op.end,
    ...get(lane),
    ...i32c(1),
    op.i32Add,
    ...tee(lane),
    ...i32c(4),
    0x49, // i32.lt_u
    ...op.brIf(0),
    ...op.end,
  ];
  return {
    name: "collect",
    params: [I32, I32, F32, F32, I32],
    results: [I32],
    locals: [I32, I32, I32, I32, I32, V128, V128, F32],
    body: [
      ...get(threshold),
      ...f32x4.splat,
      ...set(vThreshold),
      ...get(below),
      ...f32x4.splat,
      ...set(vBelow),
      ...get(p),
      ...set(base),
      ...endOf(p, n, end),
      ...eachVector(p, end, [
        ...get(p),
        ...vload(),
        ...get(vThreshold),
        ...f32x4.ge,
        ...get(p),
        ...vload(),
        ...get(vBelow),
        ...f32x4.lt,
        ...v128.and,
        ...v128.anyTrue,
        ...op.if,
        ...laneCheck,
        ...op.end,
      ]),
      ...get(count),
    ],
  };
}

/** The index of the first float at p equal to value, or −1. */
function findKernel(): KernelFn {
  const [p, n, value, end, base, vValue, at] = [0, 1, 2, 3, 4, 5, 6];
  return {
    name: "find",
    params: [I32, I32, F32],
    results: [I32],
    locals: [I32, I32, V128, I32],
    body: [
      ...get(value),
      ...f32x4.splat,
      ...set(vValue),
      ...get(p),
      ...set(base),
      ...endOf(p, n, end),
      ...eachVector(p, end, [
        ...get(p),
        ...vload(),
        ...get(vValue),
        ...f32x4.eq,
        ...v128.anyTrue,
        ...op.if,
        // The first of the four lanes that matches.
        ...get(p),
        ...set(at),
        ...op.loop,
        ...get(at),
        ...op.f32Load,
        ...get(value),
        0x5b, // f32.eq
        ...op.if,
        ...get(at),
        ...get(base),
        0x6b, // i32.sub
        ...i32c(2),
        0x76, // i32.shr_u
        0x0f, // return
        ...op.end,
        ...get(at),
        ...i32c(4),
        op.i32Add,
        ...set(at),
        ...op.br(0),
        ...op.end,
        ...op.end,
      ]),
      ...i32c(-1),
    ],
  };
}

/** Σ weight (f64) over the tokens whose logit is ≥ threshold: logits at p, weights at w. */
function massAboveKernel(): KernelFn {
  const [p, w, n, threshold, end, vThreshold, acc, tmp] = [0, 1, 2, 3, 4, 5, 6, 7];
  return {
    name: "massAbove",
    params: [I32, I32, I32, F32],
    results: [F64],
    locals: [I32, V128, V128, V128],
    body: [
      ...get(threshold),
      ...f32x4.splat,
      ...set(vThreshold),
      ...f64c(0),
      ...f64x2.splat,
      ...set(acc),
      ...endOf(p, n, end),
      ...eachVector(p, end, [
        ...get(w),
        ...vload(),
        ...get(p),
        ...vload(),
        ...get(vThreshold),
        ...f32x4.ge,
        ...v128.and,
        ...accumulate64(tmp, acc),
        ...get(w),
        ...i32c(16),
        op.i32Add,
        ...set(w),
      ]),
      ...sumLanes64(acc),
    ],
  };
}

/** Σ |a − b| (f64) over n floats at a and b. */
function absDiffKernel(): KernelFn {
  const [a, b, n, end, acc, tmp] = [0, 1, 2, 3, 4, 5];
  return {
    name: "absDiff",
    params: [I32, I32, I32],
    results: [F64],
    locals: [I32, V128, V128],
    body: [
      ...endOf(a, n, end),
      ...f64c(0),
      ...f64x2.splat,
      ...set(acc),
      ...eachVector(a, end, [
        ...get(a),
        ...vload(),
        ...get(b),
        ...vload(),
        ...f32x4.sub,
        ...f32x4.abs,
        ...accumulate64(tmp, acc),
        ...get(b),
        ...i32c(16),
        op.i32Add,
        ...set(b),
      ]),
      ...sumLanes64(acc),
    ],
  };
}

/** x ← x / t over n floats, divided in f64 and rounded once (as JavaScript's `x / t` is). */
function divideKernel(): KernelFn {
  const [p, n, t, end, x, vt] = [0, 1, 2, 3, 4, 5];
  const half = (high: boolean) => [
    ...get(x),
    ...(high ? [...get(x), ...shuffle(HIGH_HALF)] : []),
    ...f64x2.promoteLow,
    ...get(vt),
    ...f64x2.div,
    ...f32x4.demoteZero,
  ];
  return {
    name: "divide",
    params: [I32, I32, F64],
    results: [],
    locals: [I32, V128, V128],
    body: [
      ...endOf(p, n, end),
      ...get(t),
      ...f64x2.splat,
      ...set(vt),
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
      ...get(bound),
      ...f32x4.splat,
      ...set(vBound),
      ...get(value),
      ...f32x4.splat,
      ...set(vValue),
      ...eachVector(p, end, [
        ...get(p),
        ...get(vValue),
        ...get(p),
        ...vload(),
        ...tee(x),
        ...get(x),
        ...get(vBound),
        ...f32x4.lt,
        ...v128.bitselect,
        ...vstore,
      ]),
    ],
  };
}

export const KERNELS: readonly KernelFn[] = [
  maxKernel(),
  expKernel("expStats", false),
  expKernel("expWeights", true),
  collectKernel(),
  massAboveKernel(),
  findKernel(),
  absDiffKernel(),
  divideKernel(),
  maskBelowKernel(),
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
  return Uint8Array.from(out);
}
