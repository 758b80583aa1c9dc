// One vocabulary's worth of logits in WebAssembly memory, with the SIMD kernels (simd-module.ts)
// that make each full-vocabulary pass run at close to memory speed. A Sampler and a LogitState
// each own one; nothing here allocates after construction.
import { Wasm, PAGE, type WasmModule } from "../vm/wasm-api.js";
import { BLOCK, encodeKernelModule } from "./simd-module.js";

interface KernelExports {
  max(p: number, n: number): number;
  expStats(
    p: number,
    n: number,
    shift: number,
    scale: number,
    out: number,
    sums: number,
    cut: number,
  ): void;
  expWeights(
    p: number,
    n: number,
    shift: number,
    scale: number,
    out: number,
    sums: number,
    cut: number,
  ): void;
  collect(p: number, n: number, threshold: number, below: number, out: number): number;
  massAbove(p: number, w: number, n: number, threshold: number): number;
  find(p: number, n: number, value: number): number;
  absDiff(a: number, b: number, n: number): number;
  divide(p: number, n: number, t: number): void;
  maskBelow(p: number, n: number, bound: number, value: number): void;
}

let compiled: WasmModule | undefined;

/** The lowest threshold `collect` accepts: −Infinity would also collect the padding. */
const LOWEST = -3.4028234663852886e38;

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

export class VocabBuffers {
  /** Vocabulary size. */
  readonly size: number;
  /** size rounded up to a whole number of blocks; the padding holds −Infinity. */
  readonly padded: number;
  /** The logits the kernels work on (size entries). */
  readonly logits: Float32Array;
  /** Softmax weights written by expWeights (padded entries, 0 in the padding). */
  readonly weights: Float32Array;
  /** Token ids written by collect. */
  readonly index: Int32Array;
  /** Σ weight per block of BLOCK tokens, written by expWeights. */
  readonly blockSums: Float64Array;
  /** A second vocabulary-sized buffer (for diffs against a snapshot), when asked for. */
  readonly scratch: Float32Array | undefined;
  private readonly sums: Float64Array;
  private readonly k: KernelExports;
  private readonly at: {
    sums: number;
    logits: number;
    weights: number;
    index: number;
    scratch: number;
  };

  constructor(size: number, options: { scratch?: boolean } = {}) {
    this.size = size;
    this.padded = Math.ceil(size / BLOCK) * BLOCK;
    const floats = this.padded * 4;
    const sumsBytes = Math.ceil((16 + 8 * (this.padded / BLOCK)) / 16) * 16;
    const at = {
      sums: 0,
      logits: sumsBytes,
      weights: sumsBytes + floats,
      index: sumsBytes + 2 * floats,
      scratch: sumsBytes + 3 * floats,
    };
    const bytes = at.scratch + (options.scratch ? floats : 0);
    const pages = Math.ceil(bytes / PAGE);
    const memory = new Wasm.Memory({ initial: pages, maximum: pages });
    compiled ??= new Wasm.Module(encodeKernelModule());
    const instance = new Wasm.Instance(compiled, { env: { memory } });
    this.k = instance.exports as unknown as KernelExports;
    this.at = at;
    const buf = memory.buffer;
    this.sums = new Float64Array(buf, at.sums, sumsBytes / 8);
    this.blockSums = this.sums.subarray(2, 2 + this.padded / BLOCK);
    new Float32Array(buf, at.logits, this.padded).fill(-Infinity);
    this.logits = new Float32Array(buf, at.logits, size);
    this.weights = new Float32Array(buf, at.weights, this.padded);
    this.index = new Int32Array(buf, at.index, this.padded);
    this.scratch = options.scratch ? new Float32Array(buf, at.scratch, size) : undefined;
  }

  /** The largest logit, ignoring NaN; −Infinity when every logit is −Infinity or NaN. */
  max(): number {
    return this.k.max(this.at.logits, this.padded);
  }

  /** The first token holding the largest logit, or −1 when there is none. */
  argmax(): number {
    const max = this.max();
    return max === -Infinity ? -1 : this.k.find(this.at.logits, this.padded, max);
  }

  /** Σ exp((x − shift)·scale) and Σ exp(·)·(x − shift)·scale over the logits (f64 sums). */
  expStats(shift: number, scale: number): { z: number; weighted: number } {
    this.k.expStats(this.at.logits, this.padded, shift, scale, 0, this.at.sums, -Infinity);
    return { z: this.sums[0]!, weighted: this.sums[1]! };
  }

  /** Fills `weights` with exp((x − shift)·scale), 0 for logits below `cut`, and `blockSums`;
   * returns their sum. */
  expWeights(shift: number, scale: number, cut = -Infinity): number {
    const { logits, weights, sums } = this.at;
    this.k.expWeights(logits, this.padded, shift, scale, weights, sums, float32AtLeast(cut));
    return this.sums[0]!;
  }

  /** Writes the ids of the logits in [threshold, below) to `index` (ascending); returns how
   * many. */
  collect(threshold: number, below = Infinity): number {
    const { logits, index } = this.at;
    const from = float32AtLeast(Math.max(threshold, LOWEST));
    return this.k.collect(logits, this.padded, from, float32AtLeast(below), index);
  }

  /** Σ weights of the tokens whose logit is ≥ threshold (after expWeights). */
  massAbove(threshold: number): number {
    const from = float32AtLeast(threshold);
    return this.k.massAbove(this.at.logits, this.at.weights, this.padded, from);
  }

  /** Σ |logits − scratch| (f64). */
  absDiffScratch(): number {
    const whole = this.size & ~3;
    let sum = this.k.absDiff(this.at.logits, this.at.scratch, whole);
    for (let i = whole; i < this.size; i++) sum += Math.abs(this.logits[i]! - this.scratch![i]!);
    return sum;
  }

  /** logits ← logits / t, rounded as JavaScript rounds `x / t` into a Float32Array. */
  divide(t: number): void {
    const whole = this.size & ~3;
    this.k.divide(this.at.logits, whole, t);
    for (let i = whole; i < this.size; i++) this.logits[i] = this.logits[i]! / t;
  }

  /** logits below `threshold` ← value (the padding is left alone). */
  maskBelow(threshold: number, value: number): void {
    const whole = this.size & ~3;
    this.k.maskBelow(this.at.logits, whole, float32AtLeast(threshold), value);
    for (let i = whole; i < this.size; i++) if (this.logits[i]! < threshold) this.logits[i] = value;
  }
}
