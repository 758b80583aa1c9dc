// Token sampling in TypeScript over a Float32Array of logits. No per-step allocation.
//
// Order of the chain, each step: copy logits → additive bias → bans (-Infinity) → repetition
// penalty (each distinct token of the window once: positive logits divided, negative multiplied,
// as llama.cpp does) → greedy if temperature <= 0 or topK == 1 → scale by 1/temperature → top-k
// → top-p over the mass left by top-k → min-p relative to the most likely token → draw.
// Temperature comes before top-p/min-p, so they act on the distribution actually sampled.
// Cost: each vocabulary-wide pass (max, softmax weights, candidate collection) is a SIMD kernel
// (distribution.ts, vocab-kernels.ts); top-k and top-p then work on the few candidates left,
// never a full sort; every buffer is sized to the vocabulary once in the constructor.

import { BLOCK } from "./simd-module.js";
import { BOUND_RATIO, VocabBuffers } from "./vocab-kernels.js";
import { collectTopCandidates, nucleus, selectLargest } from "./distribution.js";

export { nucleus, selectLargest } from "./distribution.js";

export interface SamplerOptions {
  /** <= 0 means greedy. Default 1. */
  temperature?: number;
  /** Keep the k most likely tokens; 0 disables. */
  topK?: number;
  /** Keep the smallest most-likely set whose mass reaches p; 1 disables. */
  topP?: number;
  /** Drop tokens whose probability is below minP × the top probability; 0 disables. */
  minP?: number;
  /** > 1 discourages tokens seen in the last `repetitionWindow` tokens; 1 disables. */
  repetitionPenalty?: number;
  repetitionWindow?: number;
  /** Seed of the generator (any 32-bit integer). Default 0. */
  seed?: number;
  /** Tokens that can never be sampled. */
  bannedTokens?: Iterable<number>;
  /** Added to the logit of the token before anything else. */
  logitBias?: ReadonlyMap<number, number> | Iterable<readonly [number, number]>;
}

/** A seeded xoshiro128** generator; its whole state is four 32-bit words (kept as int32 fields
 * so the hot path stays in small-integer arithmetic). */
export class Rng {
  private s0 = 0;
  private s1 = 0;
  private s2 = 0;
  private s3 = 0;

  constructor(seed = 0) {
    this.reseed(seed);
  }

  reseed(seed: number): void {
    // splitmix32 spreads any seed (even 0) over the four words.
    let x = seed | 0;
    const words = [0, 0, 0, 0];
    for (let i = 0; i < 4; i++) {
      x = (x + 0x9e3779b9) | 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      words[i] = z ^ (z >>> 16);
    }
    [this.s0, this.s1, this.s2, this.s3] = words as [number, number, number, number];
  }

  nextUint32(): number {
    const s1 = this.s1;
    const result = Math.imul(rotl(Math.imul(s1, 5), 7), 9);
    const t = s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= s1;
    this.s1 = s1 ^ this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result >>> 0;
  }

  /** Uniform in [0, 1) with 53 random bits. */
  next(): number {
    const hi = this.nextUint32() >>> 5;
    const lo = this.nextUint32() >>> 6;
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  getState(): [number, number, number, number] {
    return [this.s0 >>> 0, this.s1 >>> 0, this.s2 >>> 0, this.s3 >>> 0];
  }

  setState(state: readonly number[]): void {
    if (state.length !== 4 || state.every((w) => (w | 0) === 0))
      throw new RangeError("rng state must be four 32-bit words, not all zero");
    [this.s0, this.s1, this.s2, this.s3] = state.map((w) => w | 0) as [
      number,
      number,
      number,
      number,
    ];
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

export class Sampler {
  readonly vocabSize: number;
  readonly rng: Rng;
  private temperature = 1;
  private topK = 0;
  private topP = 1;
  private minP = 0;
  private repetitionPenalty = 1;
  private repetitionWindow = 64;
  private banned: Int32Array = new Int32Array(0);
  private biasIds: Int32Array = new Int32Array(0);
  private biasValues: Float32Array = new Float32Array(0);
  /** The logits being sampled, with weights and candidate ids; made by the first sample()
   * (the loop's greedy and plain draws use a LogitState's buffers through sampleIn, so a
   * request that never needs a copy never pays for one: about 1.4 ms and 3 MB at 151,936). */
  private ownBuffers: VocabBuffers | undefined;
  /** The buffers of the current draw: its own, or a caller's (sampleIn); set before each. */
  private buf!: VocabBuffers;
  /** Per-token marks for the repetition penalty, made on its first use. */
  private seenStampArray: Uint32Array | undefined;
  /** The values sampleIn's in-place edits replaced, made on its first use. */
  private undoLog: UndoLog | undefined;
  /** How many tokens the last collectMinP listed. */
  private minPCount = 0;
  private stamp = 0;

  constructor(vocabSize: number, options: SamplerOptions = {}) {
    if (!Number.isInteger(vocabSize) || vocabSize < 1)
      throw new RangeError(`vocabulary size must be a positive integer, got ${vocabSize}`);
    this.vocabSize = vocabSize;
    this.rng = new Rng(options.seed ?? 0);
    this.configure(options);
  }

  private get own(): VocabBuffers {
    return (this.ownBuffers ??= new VocabBuffers(this.vocabSize));
  }

  private get seenStamp(): Uint32Array {
    return (this.seenStampArray ??= new Uint32Array(this.vocabSize));
  }

  /** Changes any subset of the options (a `seed` reseeds the generator). */
  configure(options: SamplerOptions): void {
    const o = options;
    if (o.temperature !== undefined) this.temperature = checkNumber("temperature", o.temperature);
    if (o.topK !== undefined) {
      if (!Number.isInteger(o.topK) || o.topK < 0)
        throw new RangeError(`topK must be a non-negative integer, got ${o.topK}`);
      this.topK = o.topK;
    }
    if (o.topP !== undefined) this.topP = checkUnit("topP", o.topP);
    if (o.minP !== undefined) this.minP = checkUnit("minP", o.minP);
    if (o.repetitionPenalty !== undefined) {
      if (!(o.repetitionPenalty > 0))
        throw new RangeError(`repetitionPenalty must be > 0, got ${o.repetitionPenalty}`);
      this.repetitionPenalty = o.repetitionPenalty;
    }
    if (o.repetitionWindow !== undefined) {
      if (!Number.isInteger(o.repetitionWindow) || o.repetitionWindow < 0)
        throw new RangeError(`repetitionWindow must be a non-negative integer`);
      this.repetitionWindow = o.repetitionWindow;
    }
    if (o.seed !== undefined) this.rng.reseed(o.seed);
    if (o.bannedTokens !== undefined) {
      const ids = [...o.bannedTokens];
      ids.forEach((id) => this.checkToken("banned token", id));
      this.banned = Int32Array.from(ids);
    }
    if (o.logitBias !== undefined) {
      const entries = [...o.logitBias];
      entries.forEach(([id, bias]) => {
        this.checkToken("biased token", id);
        if (Number.isNaN(bias)) throw new RangeError(`bias for token ${id} is NaN`);
      });
      this.biasIds = Int32Array.from(entries, (e) => e[0]);
      this.biasValues = Float32Array.from(entries, (e) => e[1]);
    }
  }

  /** Whether sample() is the plain argmax of the logits it is given (greedy, no bias, bans or
   * penalty), so a caller that already knows the argmax need not hand over the logits. */
  get plainGreedy(): boolean {
    return (
      (this.temperature <= 0 || this.topK === 1) &&
      this.banned.length === 0 &&
      this.biasIds.length === 0 &&
      this.repetitionPenalty === 1
    );
  }

  /** Whether sample() would leave the logits as given (no bias, bans, or penalty of a
   * non-empty `history`), so that sampleIn can draw from a caller's buffers without a copy. */
  leavesLogitsAlone(history?: ArrayLike<number>): boolean {
    return (
      this.banned.length === 0 &&
      this.biasIds.length === 0 &&
      (this.repetitionPenalty === 1 || !history || history.length === 0)
    );
  }

  /** Picks the next token. `history` is the token sequence so far (its last
   * `repetitionWindow` entries are penalised); it is only read. */
  sample(logits: Float32Array, history?: ArrayLike<number>): number {
    this.prepare(logits, history);
    return this.pick(false);
  }

  /**
   * Picks the next token from logits already in `buffers` (a LogitState's, computed on once per
   * step), as sample() would from a copy of them: the same draw, without copying the vocabulary
   * again. Bias, bans and the repetition penalty of `history` are applied in place and undone
   * afterwards (the few values they touch are kept aside), so the logits end as they were; the
   * buffers' weights and candidate ids are overwritten, and so are their block maxima when
   * the logits were edited (see leavesLogitsAlone). `fresh`: their block maxima belong to these
   * logits.
   */
  sampleIn(buffers: VocabBuffers, fresh = false, history?: ArrayLike<number>): number {
    if (buffers.size !== this.vocabSize)
      throw new RangeError(`expected ${this.vocabSize} logits, got ${buffers.size}`);
    this.buf = buffers;
    if (this.leavesLogitsAlone(history)) return this.pick(fresh);
    const work = buffers.logits;
    const window = Math.min(this.repetitionWindow, history?.length ?? 0);
    const log = (this.undoLog ??= new UndoLog());
    log.reset(this.biasIds.length + this.banned.length + window);
    try {
      this.applyEdits(work, history, log);
      return this.pick(false);
    } finally {
      log.undo(work);
    }
  }

  private pick(fresh: boolean): number {
    if (this.temperature <= 0 || this.topK === 1) {
      const best = this.buf.argmax(fresh);
      if (best < 0) throw new Error("every token is masked: nothing left to sample");
      return best;
    }
    return this.draw(fresh);
  }

  /** Copies the logits, then applies bias, bans and penalty. */
  private prepare(logits: Float32Array, history?: ArrayLike<number>): void {
    const n = this.vocabSize;
    if (logits.length !== n) throw new RangeError(`expected ${n} logits, got ${logits.length}`);
    this.buf = this.own;
    this.buf.logits.set(logits);
    this.applyEdits(this.buf.logits, history, null);
  }

  /** Bias, bans, then the repetition penalty of `history`, on `work`; each value replaced is
   * recorded in `log` first, when given. */
  private applyEdits(
    work: Float32Array,
    history: ArrayLike<number> | undefined,
    log: UndoLog | null,
  ): void {
    const n = this.vocabSize;
    for (let i = 0; i < this.biasIds.length; i++) {
      const id = this.biasIds[i]!;
      log?.keep(id, work[id]!);
      work[id]! += this.biasValues[i]!;
    }
    for (let i = 0; i < this.banned.length; i++) {
      const id = this.banned[i]!;
      log?.keep(id, work[id]!);
      work[id] = -Infinity;
    }
    const penalty = this.repetitionPenalty;
    if (penalty !== 1 && history && history.length > 0 && this.repetitionWindow > 0) {
      if (++this.stamp === 0xffffffff) {
        this.seenStamp.fill(0);
        this.stamp = 1;
      }
      const stamp = this.stamp;
      for (let i = Math.max(0, history.length - this.repetitionWindow); i < history.length; i++) {
        const id = history[i]!;
        if (!(id >= 0 && id < n))
          throw new RangeError(`history token ${id} is outside the vocabulary`);
        if (this.seenStamp[id] === stamp) continue;
        this.seenStamp[id] = stamp;
        const v = work[id]!;
        log?.keep(id, v);
        work[id] = v > 0 ? v / penalty : v * penalty;
      }
    }
  }

  private draw(fresh: boolean): number {
    const buf = this.buf;
    const work = buf.logits;
    const weight = buf.weights;
    const index = buf.index;
    const max = buf.max(fresh);
    if (max === -Infinity) throw new Error("every token is masked: nothing left to sample");
    // An infinite logit (or bias) is certain: no weights can be formed around it.
    if (max === Infinity) return work.indexOf(Infinity);
    const inv = 1 / this.temperature;
    let n: number;
    let sum = 0;
    if (this.topK > 0) {
      const found = collectTopCandidates(buf, this.topK, true);
      n = Math.min(this.topK, found);
      if (found > n) selectLargest(index, found, n, work);
    } else if (this.topP < 1) {
      const bounds = buf.expBounds(max, inv);
      if (!(this.minP > 0 && this.minPInsideNucleus(max, inv, bounds)))
        return this.drawFromNucleus(max, inv, bounds);
      // The nucleus holds the whole min-p set (which buf.index still lists): min-p decides.
      n = this.minPCount;
    } else if (this.minP > 0) {
      n = this.collectMinP(max);
    } else {
      // Temperature alone: the whole vocabulary, drawn through the per-block sums.
      return this.drawByBounds(max, inv);
    }
    for (let j = 0; j < n; j++) {
      const id = index[j]!;
      const w = Math.exp((work[id]! - max) * inv);
      weight[id] = w;
      sum += w;
    }
    if (this.topP < 1 && this.topK > 0) {
      const kept = nucleus(index, n, weight, this.topP * sum);
      n = kept.count;
      sum = kept.mass;
    }
    if (this.minP > 0) {
      // The most likely token has weight exp(0) = 1 and always survives top-k and top-p.
      const threshold = this.minP;
      let kept = 0;
      sum = 0;
      for (let j = 0; j < n; j++) {
        const id = index[j]!;
        const w = weight[id]!;
        if (w >= threshold) {
          index[kept++] = id;
          sum += w;
        }
      }
      n = kept;
    }
    let target = this.rng.next() * sum;
    for (let j = 0; j < n; j++) {
      const id = index[j]!;
      target -= weight[id]!;
      if (target < 0) return id;
    }
    // Rounding left a sliver of mass: the last candidate with weight takes it.
    for (let j = n - 1; j >= 0; j--) if (weight[index[j]!]! > 0) return index[j]!;
    return index[0]!;
  }

  /**
   * Whether the min-p set (weights ≥ minP, a few tokens near the top) weighs less than p·z, so
   * that the nucleus contains it and top-p then min-p keeps exactly it. Decided without the
   * exponentials of the whole vocabulary: z is at least Σ upper bounds ÷ their largest ratio.
   * When it cannot be decided so, the caller takes the exact nucleus.
   */
  private minPInsideNucleus(max: number, inv: number, bounds: number): boolean {
    const buf = this.buf;
    const n = (this.minPCount = this.collectMinP(max));
    let mass = 0;
    for (let j = 0; j < n; j++) {
      const w = Math.exp((buf.logits[buf.index[j]!]! - max) * inv);
      if (w >= this.minP) mass += w;
    }
    return mass < (this.topP * bounds) / BOUND_RATIO;
  }

  /** Lists in buf.index the tokens that may reach min-p, returns how many: only weights ≥ minP
   * survive, so logit ≥ max + T·ln(minP); collected a little below that bound, and the exact
   * weight test decides. */
  private collectMinP(max: number): number {
    const bound = max + Math.log(this.minP) * this.temperature;
    return this.buf.collectAbove(bound - 1e-6 * (Math.abs(bound) + 1));
  }

  /** A token drawn with probability weights[id] ÷ total through the per-block sums, after
   * expBounds or expWeights wrote them; −1 when rounding left the draw on an empty stretch. */
  private propose(total: number): number {
    const weights = this.buf.weights;
    const blocks = this.buf.blockSums;
    let target = this.rng.next() * total;
    let b = 0;
    while (b < blocks.length - 1 && target >= blocks[b]!) target -= blocks[b++]!;
    const start = b * BLOCK;
    const end = Math.min(start + BLOCK, this.vocabSize);
    let id = end - 1;
    for (let i = start; i < end; i++) {
      target -= weights[i]!;
      if (target < 0) {
        id = i;
        break;
      }
    }
    // Rounding left the target past the block's last weight: take its last token with one.
    while (id >= start && !(weights[id]! > 0)) id--;
    return id >= start ? id : -1;
  }

  /**
   * Draws from the weights exp((x − max)·inv) of every token without computing them all: a
   * token is proposed from cheap upper bounds of the weights (block by block, then within the
   * block) and accepted with probability weight ÷ bound, which samples the exact distribution;
   * about 1 proposal in 30 is rejected.
   */
  private drawByBounds(max: number, inv: number): number {
    const buf = this.buf;
    const total = buf.expBounds(max, inv);
    for (;;) {
      const id = this.propose(total);
      if (id < 0) continue;
      if (this.rng.next() * buf.weights[id]! < Math.exp((buf.logits[id]! - max) * inv)) return id;
    }
  }

  /**
   * Top-p, and min-p after it when asked. The nucleus is every token whose more likely tokens
   * weigh less than p·z together (so ties at its edge stay in, as logit_top_p keeps them).
   * Drawn by rejection, without the exact z or the nucleus's edge: a token proposed from the
   * bounds and accepted with probability weight ÷ bound follows the whole softmax; it is kept
   * when it is in the nucleus (and its weight reaches min-p). Membership is decided by one pass
   * that sums the bounds of the tokens above it: those bounds bracket its heavier mass and the
   * rest within BOUND_RATIO, which decides it unless its heavier mass lies within about 6% of
   * the edge (2% of proposals at p = 0.9). Only then are the exact weights computed, and the
   * draw goes on from them. `bounds`: what expBounds(max, inv) returned.
   */
  private drawFromNucleus(max: number, inv: number, bounds: number): number {
    const buf = this.buf;
    const p = this.topP;
    /** The bounds' ratio, and room for the roundings of two different float32 sums of them. */
    const ratio = BOUND_RATIO * (1 + 1e-5);
    let exact = false;
    let total = bounds;
    for (;;) {
      const id = this.propose(total);
      if (id < 0) continue;
      const logit = buf.logits[id]!;
      const weight = Math.exp((logit - max) * inv);
      if (!exact && !(this.rng.next() * buf.weights[id]! < weight)) continue;
      if (weight < this.minP) continue;
      // Near the top, the bounds of the few blocks that hold a more likely token settle it
      // without a pass: they weigh at least its heavier mass, and z ≥ Σ bounds ÷ the ratio.
      if (!exact && this.boundsOfBlocksAbove(logit) < (p * total) / ratio) return id;
      const heavier = buf.massAboveLogit(logit);
      if (!exact) {
        const rest = total - heavier;
        if ((1 - p) * heavier < (p * rest) / ratio) return id;
        if (((1 - p) * heavier) / ratio >= p * rest) continue;
        // Too close to the edge for the bounds: weigh every token exactly and decide again.
        total = buf.expWeights(max, inv);
        exact = true;
        if (buf.massAboveLogit(logit) < p * total) return id;
        continue;
      }
      if (heavier < p * total) return id;
    }
  }

  /** Σ of the per-block sums (after expBounds: of bounds) of the blocks whose largest logit is
   * above `logit`. */
  private boundsOfBlocksAbove(logit: number): number {
    const maxima = this.buf.blockMaxima;
    const sums = this.buf.blockSums;
    let sum = 0;
    for (let b = 0; b < maxima.length; b++) if (maxima[b]! > logit) sum += sums[b]!;
    return sum;
  }

  private checkToken(what: string, id: number): void {
    if (!Number.isInteger(id) || id < 0 || id >= this.vocabSize)
      throw new RangeError(`${what} ${id} is outside the vocabulary 0..${this.vocabSize - 1}`);
  }
}

/** Logit values replaced by in-place edits, put back in reverse order (so a token edited
 * twice, biased and banned say, gets its first value). */
class UndoLog {
  private ids = new Int32Array(0);
  private values = new Float32Array(0);
  private count = 0;
  /** Empties the log, with room for `capacity` entries. */
  reset(capacity: number): void {
    if (this.ids.length < capacity) {
      this.ids = new Int32Array(capacity);
      this.values = new Float32Array(capacity);
    }
    this.count = 0;
  }
  keep(id: number, value: number): void {
    this.ids[this.count] = id;
    this.values[this.count++] = value;
  }
  undo(work: Float32Array): void {
    for (let i = this.count - 1; i >= 0; i--) work[this.ids[i]!] = this.values[i]!;
    this.count = 0;
  }
}

function checkNumber(name: string, v: number): number {
  if (!Number.isFinite(v)) throw new RangeError(`${name} must be a finite number, got ${v}`);
  return v;
}

function checkUnit(name: string, v: number): number {
  if (!(v >= 0 && v <= 1)) throw new RangeError(`${name} must be within 0..1, got ${v}`);
  return v;
}

/** The first token with the highest logit (NaN never wins). */
export function argmax(logits: Float32Array): number {
  let best = -1;
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) {
    const v = logits[i]!;
    if (v > max) {
      max = v;
      best = i;
    }
  }
  if (best < 0) throw new Error("every token is masked: nothing left to sample");
  return best;
}
