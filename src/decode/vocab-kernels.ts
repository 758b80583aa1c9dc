// One vocabulary's worth of logits in WebAssembly memory, with the SIMD kernels (simd-module.ts)
// that make each full-vocabulary pass run at close to memory speed, and the native ones that
// run some passes wider where they are built (src/native/) or bound (llama.cpp's exp kernel).
// A Sampler and a LogitState each own one; nothing here allocates after construction.
import { Wasm, PAGE, type WasmModule } from "../vm/wasm-api.js";
import { ggmlCpuKernels, type GgmlCpuKernels } from "../engine/llama/ggml-cpu-kernels.js";
import { nativeKernels, type NativeVocabKernels } from "../native/native-kernels.js";
import { holdLogits, releaseLogits, type LogitReader } from "../engine/llama/logit-readers.js";
import {
  BLOCK,
  CONSTANT_BYTES,
  EXP_CUT,
  EXP_HI,
  EXP_LO,
  EXP_LOW,
  EXP_SHIFT,
  FLOOR_NATS,
  PARAMS_AT,
  encodeKernelModule,
} from "./simd-module.js";

type ExpKernel = (p: number, n: number, out: number, sums: number) => void;

interface KernelExports {
  blockMax(p: number, n: number, out: number): number;
  expWeights: ExpKernel;
  bounds(
    p: number,
    n: number,
    shift: number,
    a: number,
    b: number,
    out: number,
    sums: number,
  ): void;
  collect(p: number, n: number, threshold: number, below: number, out: number): number;
  maskCollect(
    p: number,
    n: number,
    threshold: number,
    below: number,
    out: number,
    value: number,
    weightsDelta: number,
    outW: number,
    outX: number,
  ): number;
  massAbove(p: number, w: number, n: number, threshold: number): number;
  absDiff(a: number, b: number, n: number): number;
  scale(p: number, n: number, r: number): void;
  maskBelow(p: number, n: number, bound: number, value: number): void;
  /** Block maxima and per-block Σe, Σe·d (see simd-module.ts); returns the largest. */
  blockStats(p: number, n: number, maxOut: number, sums: number): number;
  /** Σ w·(x − shift), x raised to `low` first in the clamped one (see simd-module.ts). */
  weightedSum(p: number, w: number, n: number, shift: number, low: number): number;
  weightedSumClamped(p: number, w: number, n: number, shift: number, low: number): number;
}

let compiled: WasmModule | undefined;

/** A native exp kernel: y = exp(x − shift) over n floats, returning Σy in float64. */
type SoftMaxKernel = Pick<GgmlCpuKernels, "softMax">;

/** The native exp kernel to use: the project's own, else llama.cpp's, else none. */
function nativeExp(): SoftMaxKernel | undefined {
  return nativeKernels() ?? ggmlCpuKernels();
}

/** The lowest threshold `collect` accepts: −Infinity would also collect the padding. */
const LOWEST = -3.4028234663852886e38;

/** What the bounds kernel adds to 127·2^23 (in units of 2^−23 of the exponent): more than the
 * roundings of its three float32 operations can take away, so a bound is never below its
 * weight. */
const BOUND_MARGIN = 512;

/** The most an upper bound from expBounds exceeds its weight: the chord (1 + f) over 2^f is
 * largest at f = 1/ln 2 − 1, 1.061476, and the margin adds 2^−14. */
export const BOUND_RATIO = 1.0616;

/** Logits sampledSoftmaxWeights takes its shift from (strided over the vocabulary). */
const SHIFT_SAMPLE = 512;
/** The most the weights shifted by a sampled logit may sum to (e^60). */
const MAX_SAMPLED_SUM = Math.exp(60);

const bitsOf = new Int32Array(1);
const floatOf = new Float32Array(bitsOf.buffer);

/** The smallest float32 ≥ x, so that `v < x` ⇔ `v < bound` (and `v ≥ x` ⇔ `v ≥ bound`) for
 * every float32 v: kernels compare in float32. */
function float32AtLeast(x: number): number {
  const f = Math.fround(x);
  if (!(f < x)) return f;
  if (f === 0) return 1.401298464324817e-45;
  floatOf[0] = f;
  bitsOf[0]! += f > 0 ? 1 : -1; // one ulp towards +Infinity
  return floatOf[0]!;
}

/** The softmax sums at temperature 1 (see VocabBuffers.softmaxSums). */
export interface SoftmaxSums {
  /** The largest logit M. */
  max: number;
  /** Σ exp(x − M). */
  z: number;
  /** Σ exp(x − M)·(x − M). */
  weighted: number;
  /** Whether `weights` now hold exp(x − M), summing to z. */
  weights: boolean;
}

export class VocabBuffers implements LogitReader {
  /** Vocabulary size. */
  readonly size: number;
  /** size rounded up to a whole number of blocks; the padding holds −Infinity. */
  readonly padded: number;
  /** The logits the kernels work on (size entries), once a pending load is copied in. */
  private readonly view: Float32Array;
  /** Logits load() has not copied yet: the first pass that reads the logits copies them, and
   * the native statistics pass copies them in the same pass (see load). */
  private pending: Float32Array | undefined;
  /** Softmax weights written by expWeights (padded entries, 0 in the padding). */
  readonly weights: Float32Array;
  /** Token ids written by collect. */
  readonly index: Int32Array;
  /** Σ weight per block of BLOCK tokens, written by expWeights. */
  readonly blockSums: Float64Array;
  /** The largest logit of each block of BLOCK tokens, written by max() and argmax(). */
  readonly blockMaxima: Float32Array;
  /** The logits and weights of the tokens maskBelowCollect listed, in `index`'s order. */
  readonly bandLogits: Float32Array;
  readonly bandWeights: Float32Array;
  /** A second vocabulary-sized buffer (for diffs against a snapshot), when asked for. */
  readonly scratch: Float32Array | undefined;
  private readonly sums: Float64Array;
  /** The exp kernels' parameter vectors (EXP_*), four lanes each. */
  private readonly params: Float32Array;
  private readonly kernels: KernelExports;
  private readonly at: {
    sums: number;
    maxima: number;
    logits: number;
    weights: number;
    index: number;
    scratch: number;
    stats: number;
    bandLogits: number;
    bandWeights: number;
  };
  private readonly stats: Float64Array;

  constructor(size: number, options: { scratch?: boolean } = {}) {
    this.size = size;
    this.padded = Math.ceil(size / BLOCK) * BLOCK;
    const floats = this.padded * 4;
    const blocks = this.padded / BLOCK;
    const sumsBytes = Math.ceil((16 + 8 * blocks) / 16) * 16;
    const maximaBytes = Math.ceil((4 * blocks) / 16) * 16;
    const sums = CONSTANT_BYTES;
    const logits = sums + sumsBytes + maximaBytes;
    const stats = logits + 3 * floats + (options.scratch ? floats : 0);
    const at = {
      sums,
      maxima: sums + sumsBytes,
      logits,
      weights: logits + floats,
      index: logits + 2 * floats,
      scratch: logits + 3 * floats,
      stats,
      bandLogits: stats + 16 * blocks,
      bandWeights: stats + 16 * blocks + floats,
    };
    const bytes = at.bandWeights + floats;
    const pages = Math.ceil(bytes / PAGE);
    const memory = new Wasm.Memory({ initial: pages, maximum: pages });
    compiled ??= new Wasm.Module(encodeKernelModule());
    const instance = new Wasm.Instance(compiled, { env: { memory } });
    this.kernels = instance.exports as unknown as KernelExports;
    this.at = at;
    const buf = memory.buffer;
    this.sums = new Float64Array(buf, at.sums, sumsBytes / 8);
    this.params = new Float32Array(buf, PARAMS_AT, CONSTANT_BYTES / 4 - PARAMS_AT / 4);
    this.blockSums = this.sums.subarray(2, 2 + blocks);
    this.blockMaxima = new Float32Array(buf, at.maxima, blocks);
    new Float32Array(buf, at.logits, this.padded).fill(-Infinity);
    this.view = new Float32Array(buf, at.logits, size);
    this.weights = new Float32Array(buf, at.weights, this.padded);
    this.index = new Int32Array(buf, at.index, this.padded);
    this.stats = new Float64Array(buf, at.stats, 2 * blocks);
    this.scratch = options.scratch ? new Float32Array(buf, at.scratch, size) : undefined;
    this.bandLogits = new Float32Array(buf, at.bandLogits, this.padded);
    this.bandWeights = new Float32Array(buf, at.bandWeights, this.padded);
  }

  /** The logits (size entries). */
  get logits(): Float32Array {
    if (this.pending) this.settle();
    return this.view;
  }

  /** The WebAssembly kernels, on the logits (a pending load is copied in first). */
  private get k(): KernelExports {
    if (this.pending) this.settle();
    return this.kernels;
  }

  /**
   * Starts from the logits `source` (size entries). Where the native kernels are bound, the
   * copy waits for the first pass that reads the logits, and softmaxSums copies them in its
   * own pass, while each block is in L1 (one pass over the vocabulary instead of two). The
   * engine copies a pending load in before a decode overwrites its buffer, or it is freed
   * (engine/llama/logit-readers.ts); any other `source` must stay unchanged until then.
   */
  load(source: Float32Array): void {
    if (source.length === this.size && source !== this.view && nativeKernels()) {
      this.pending = source;
      // The engine makes the copy before its next decode overwrites `source` (or frees it).
      holdLogits(this);
      return;
    }
    this.drop();
    this.view.set(source);
  }

  /** Copies a pending load in (LogitReader: the engine calls it before a decode). */
  settle(): void {
    const source = this.pending;
    if (!source) return;
    this.drop();
    this.view.set(source);
  }

  /** Forgets a pending load. */
  private drop(): void {
    if (!this.pending) return;
    this.pending = undefined;
    releaseLogits(this);
  }

  /** The largest logit, ignoring NaN; −Infinity when every logit is −Infinity or NaN. Also
   * fills `blockMaxima` (same pass), unless `fresh`: they belong to these logits already, and
   * the largest of them is the answer. */
  max(fresh = false): number {
    if (fresh) return this.largestBlockMax();
    return this.k.blockMax(this.at.logits, this.padded, this.at.maxima);
  }

  /**
   * The largest logit M, Σ exp(x − M) and Σ exp(x − M)·(x − M) over the logits; also fills
   * `blockMaxima`. With the project's own native kernel where it is built and bound
   * (ownSoftmaxSums), else llama.cpp's exp kernel where it is bound (nativeSoftmaxSums), else
   * in one WebAssembly pass (wasmSoftmaxSums). The blockStats kernels (native and WebAssembly)
   * sum each block relative to its own maximum m (float64 sums); here they are rescaled: Σ e^(x−M) = e^(m−M)·Σ e^(x−m), and
   * Σ e^(x−M)(x−M) = e^(m−M)·(Σ e^(x−m)(x−m) + (m − M)·Σ e^(x−m)). Tokens 85.5 nats or more
   * below their block's maximum are left out, and so are blocks SKIP_NATS (40) below M: each
   * such token weighs under e^−40 of the most likely one (the bound is in simd-module.ts).
   * `weights`: llama.cpp's path also left exp(x − M) in `weights` (their sum is z).
   */
  softmaxSums(): SoftmaxSums {
    const own = nativeKernels();
    if (own) return this.ownSoftmaxSums(own);
    const native = ggmlCpuKernels();
    return (native && this.nativeSoftmaxSums(native)) ?? this.wasmSoftmaxSums();
  }

  /** softmaxSums with the project's own native kernel (src/native/): the WebAssembly
   * blockStats pass, 16 or 8 wide with FMA, copying a pending load in the same pass; no
   * weights written. */
  private ownSoftmaxSums(own: NativeVocabKernels): SoftmaxSums {
    const source = this.pending ?? this.view;
    this.drop();
    const blocks = this.blockMaxima.length;
    const max = own.blockStats(source, this.view, this.size, blocks, this.blockMaxima, this.stats);
    return this.rescaledSums(max);
  }

  /**
   * softmaxSums with llama.cpp's exp kernel (8-wide AVX2 where the WebAssembly one is 4-wide):
   * one WebAssembly pass for the block maxima and the largest logit M; the kernel writes the
   * weights exp(x − M) and returns their float64 sum; one WebAssembly pass over logits and
   * weights sums w·(x − M) for the entropy. Shifting by M itself (not an estimate) keeps every
   * x − M ≤ 0, so the entropy's float32 products lose nothing to a large offset. Tokens more
   * than ~87 nats down underflow to 0, each under e^−87 of the most likely. Undefined for a
   * NaN logit or no finite maximum, which the WebAssembly kernel's rules cover.
   */
  private nativeSoftmaxSums(native: GgmlCpuKernels): SoftmaxSums | undefined {
    const max = this.max();
    if (!(max > -Infinity && max < Infinity)) return undefined;
    const z = this.nativeWeights(native, max);
    return z === undefined ? undefined : { max, z, weighted: this.weightedSum(max), weights: true };
  }

  /** Σ weight·(logit − shift) after llama.cpp's exp kernel wrote the weights: unclamped over
   * the whole blocks (no −Infinity there, usually), clamped over the last, which holds the
   * padding; all clamped when a −Infinity made the sum NaN. */
  private weightedSum(shift: number): number {
    const { logits, weights } = this.at;
    const low = Math.fround(shift - 2 * FLOOR_NATS);
    const whole = Math.floor(this.size / BLOCK) * BLOCK;
    const k = this.k;
    let sum = k.weightedSum(logits, weights, whole, shift, low);
    if (whole < this.padded)
      sum += k.weightedSumClamped(
        logits + 4 * whole,
        weights + 4 * whole,
        this.padded - whole,
        shift,
        low,
      );
    if (Number.isNaN(sum)) sum = k.weightedSumClamped(logits, weights, this.padded, shift, low);
    return sum;
  }

  /** softmaxSums in WebAssembly alone: one blockStats pass. */
  private wasmSoftmaxSums(): SoftmaxSums {
    return this.rescaledSums(
      this.k.blockStats(this.at.logits, this.padded, this.at.maxima, this.at.stats),
    );
  }

  /** The sums of softmaxSums from a blockStats pass's per-block sums (see there). */
  private rescaledSums(max: number): SoftmaxSums {
    const maxima = this.blockMaxima;
    const stats = this.stats;
    let z = 0;
    let weighted = 0;
    if (max > -Infinity && max < Infinity) {
      for (let b = 0; b < maxima.length; b++) {
        const blockZ = stats[2 * b]!;
        if (blockZ === 0) continue;
        const d = maxima[b]! - max;
        const scale = Math.exp(d);
        z += blockZ * scale;
        weighted += (stats[2 * b + 1]! + d * blockZ) * scale;
      }
    }
    return { max, z, weighted, weights: false };
  }

  /** The first token holding the largest logit, or −1 when there is none: one pass for the
   * block maxima (unless `fresh`: they belong to these logits already), then a scan of the
   * first block holding the largest. */
  argmax(fresh = false): number {
    const max = this.max(fresh);
    if (max === -Infinity) return -1;
    const block = this.blockMaxima.indexOf(max);
    const logits = this.logits;
    const end = Math.min((block + 1) * BLOCK, this.size);
    for (let i = block * BLOCK; i < end; i++) if (logits[i] === max) return i;
    return -1;
  }

  /** The largest of `blockMaxima` (−Infinity when every block is empty). */
  private largestBlockMax(): number {
    const maxima = this.blockMaxima;
    let max = -Infinity;
    for (let b = 0; b < maxima.length; b++) if (maxima[b]! > max) max = maxima[b]!;
    return max;
  }

  /** Writes the exp kernels' parameters for exp((x − shift)·scale): the clamp 86 nats down,
   * scale·log2 e split into a float32 and its remainder, and the cut (kept at or above the
   * clamp, and rounded up so that the kernels' float32 comparison means x ≥ cut). */
  private setExpParams(shift: number, scale: number, cut: number): void {
    const a = scale * Math.LOG2E;
    const hi = Math.fround(a);
    const low = Math.fround(shift - FLOOR_NATS / scale);
    const params = this.params;
    const put = (at: number, v: number) => params.fill(v, 4 * at, 4 * at + 4);
    put(EXP_SHIFT, shift);
    put(EXP_LOW, low);
    put(EXP_HI, hi);
    put(EXP_LO, a - hi);
    put(EXP_CUT, float32AtLeast(Math.max(cut, low)));
  }

  /** Fills `weights` with exp((x − shift)·scale), 0 for logits below `cut` or more than 86
   * nats below the shift, and `blockSums`; returns their sum. */
  expWeights(shift: number, scale: number, cut = -Infinity): number {
    const { logits, weights, sums } = this.at;
    this.setExpParams(shift, scale, cut);
    this.k.expWeights(logits, this.padded, weights, sums);
    return this.sums[0]!;
  }

  /** Fills `weights` with exp(x − shift) (0 for NaN and −Infinity) and returns their sum: by
   * a native exp kernel where one is bound (the project's own, else llama.cpp's; blockSums are
   * then not written), else expWeights. */
  softmaxWeights(shift: number): number {
    const native = nativeExp();
    return (native && this.nativeWeights(native, shift)) ?? this.expWeights(shift, 1);
  }

  /** `weights` = exp(logits − shift) by a native kernel, and their sum; undefined when a NaN
   * logit made llama.cpp's sum NaN (the other kernels give NaN no weight). */
  private nativeWeights(native: SoftMaxKernel, shift: number): number | undefined {
    const z = native.softMax(this.size, this.weights, this.logits, shift);
    return Number.isNaN(z) ? undefined : z;
  }

  /**
   * The weights for logit_top_p's nucleus search without a pass for the maximum first: where
   * a native exp kernel is bound (nativeExp), it writes exp(x − s) with s the largest of a strided
   * sample (any shift will do for a search that compares masses, as long as the weights stay
   * finite: at most e^60 in all, so that no float32 sum of them overflows). Returns s and the
   * weights' sum, or undefined (no kernel, nothing finite sampled, a NaN logit, a logit far
   * above the sample's): then expWeights or softmaxWeights at the maximum.
   */
  sampledSoftmaxWeights(): { shift: number; z: number } | undefined {
    const native = nativeExp();
    if (!native) return undefined;
    const logits = this.logits;
    const stride = Math.max(1, Math.floor(this.size / SHIFT_SAMPLE));
    let shift = -Infinity;
    for (let i = 0; i < this.size; i += stride) if (logits[i]! > shift) shift = logits[i]!;
    if (!(shift > -Infinity && shift < Infinity)) return undefined;
    const z = native.softMax(this.size, this.weights, logits, shift);
    return z <= MAX_SAMPLED_SUM ? { shift, z } : undefined;
  }

  /** Fills `weights` with upper bounds of exp((x − shift)·scale) (each at most 6.2% over, 0
   * for NaN and −Infinity), and `blockSums` with their sums per block; returns the total.
   * Drawing from the bounds and accepting with probability weight ÷ bound samples the exact
   * distribution for a fraction of the cost of the exponentials. */
  expBounds(shift: number, scale: number): number {
    const { logits, weights, sums } = this.at;
    const a = Math.fround(scale * Math.LOG2E * 2 ** 23);
    const b = 127 * 2 ** 23 + BOUND_MARGIN;
    this.k.bounds(logits, this.padded, shift, a, b, weights, sums);
    return this.sums[0]!;
  }

  /** Writes the ids of the logits ≥ threshold to `index` (ascending); returns how many. Scans
   * only the blocks whose maximum reaches the threshold: `blockMaxima` must be current (max()
   * ran on these logits), and the threshold high enough that few blocks do. */
  collectAbove(threshold: number): number {
    const maxima = this.blockMaxima;
    const index = this.index;
    const { logits, index: out } = this.at;
    const from = float32AtLeast(Math.max(threshold, LOWEST));
    let count = 0;
    for (let b = 0; b < maxima.length; b++) {
      if (!(maxima[b]! >= threshold)) continue;
      // The kernel numbers the block's tokens from 0 (the padding, −Infinity, is never listed).
      const found = this.k.collect(logits + 4 * b * BLOCK, BLOCK, from, Infinity, out + 4 * count);
      for (let i = count; i < count + found; i++) index[i]! += b * BLOCK;
      count += found;
    }
    return count;
  }

  /** Writes the ids of the logits in [threshold, below) to `index` (ascending); returns how
   * many. */
  collect(threshold: number, below = Infinity): number {
    const { logits, index } = this.at;
    const from = float32AtLeast(Math.max(threshold, LOWEST));
    return this.k.collect(logits, this.padded, from, float32AtLeast(below), index);
  }

  /** collect(threshold, below) and maskBelow(threshold, value) in one pass (the padding is
   * left alone): the ids of the logits in [threshold, below) to `index`, their logits to
   * `bandLogits` and their weights to `bandWeights` (in the same order); returns how many. */
  maskBelowCollect(threshold: number, below: number, value: number): number {
    const { logits, weights, index, bandLogits, bandWeights, at } = this;
    const from = float32AtLeast(Math.max(threshold, LOWEST));
    const to = float32AtLeast(below);
    const own = nativeKernels()?.maskCollect;
    if (own)
      return own(logits, weights, this.size, from, to, value, index, bandWeights, bandLogits);
    const whole = this.size & ~15; // the kernel takes 16 floats per step
    let count = this.k.maskCollect(
      at.logits,
      whole,
      from,
      to,
      at.index,
      value,
      at.weights - at.logits,
      at.bandWeights,
      at.bandLogits,
    );
    for (let i = whole; i < this.size; i++) {
      const x = logits[i]!;
      if (x < from) logits[i] = value;
      else if (x < to) {
        index[count] = i;
        bandLogits[count] = x;
        bandWeights[count++] = weights[i]!;
      }
    }
    return count;
  }

  /** Σ weights of the tokens whose logit is ≥ threshold (after expWeights). */
  massAbove(threshold: number): number {
    return this.massFrom(float32AtLeast(threshold));
  }

  /** Σ weights of the tokens whose logit is ≥ `from` (a float32): natively where the
   * project's kernels are bound (16 or 8 wide), else in WebAssembly. */
  private massFrom(from: number): number {
    const own = nativeKernels();
    if (own) return own.massAbove(this.logits, this.weights, this.size, from);
    return this.k.massAbove(this.at.logits, this.at.weights, this.padded, from);
  }

  /** Σ weights of the tokens whose logit is above `logit` (strictly). */
  massAboveLogit(logit: number): number {
    floatOf[0] = logit;
    bitsOf[0]! += logit > 0 ? 1 : logit < 0 ? -1 : 0; // one ulp up (float32)
    return this.massFrom(logit === 0 ? 1.401298464324817e-45 : floatOf[0]!);
  }

  /** Σ |logits − scratch| (f64). */
  absDiffScratch(): number {
    const whole = this.size & ~15; // the kernel sums 16 floats per step
    let sum = this.k.absDiff(this.at.logits, this.at.scratch, whole);
    for (let i = whole; i < this.size; i++) sum += Math.abs(this.logits[i]! - this.scratch![i]!);
    return sum;
  }

  /** logits ← logits / t: multiplied by 1/t in float64 and rounded to float32, which equals
   * JavaScript's rounded `x / t` unless x/t lies within 2^−52 (relative) of a float32 rounding
   * midpoint; a multiplication streams at memory speed where a division does not. */
  divide(t: number): void {
    const whole = this.size & ~3;
    const r = 1 / t;
    this.k.scale(this.at.logits, whole, r);
    for (let i = whole; i < this.size; i++) this.logits[i] = this.logits[i]! * r;
  }

  /** logits below `threshold` ← value (the padding is left alone). */
  maskBelow(threshold: number, value: number): void {
    const whole = this.size & ~3;
    this.k.maskBelow(this.at.logits, whole, float32AtLeast(threshold), value);
    for (let i = whole; i < this.size; i++) if (this.logits[i]! < threshold) this.logits[i] = value;
  }
}
