// The next-token logits of one sequence at one sampling step, as VM code sees and edits them:
// a private copy of the engine's buffer, with cached top-k/entropy and numbered snapshots.
// Every vocabulary-wide computation is the shared one in distribution.ts.
import { maskOutsideNucleus, softmaxStats, topTokens } from "./distribution.js";
import { VocabBuffers } from "./vocab-kernels.js";
import type { Sampler } from "./sampler.js";

/** How many ranks top_k_token/top_k_prob can reach. */
export const TOP_K_CAPACITY = 64;
/** Ranks found first: enough for the usual reads, and only a few blocks to scan. */
const FEW_RANKS = 8;
/** Snapshot slots for logit_snapshot/logit_restore/logit_diff (the seed had 2). */
export const SNAPSHOT_SLOTS = 8;
/** What logit_mask_below and logit_top_p write into masked entries (the seed's value). */
export const MASKED_LOGIT = -10000;

/** A recorded edit, replayed on a later step's logits (region programs run one step early). */
export type LogitEdit =
  | { op: "set"; id: number; value: number }
  | { op: "temperature"; t: number }
  | { op: "mask-below"; threshold: number }
  | { op: "top-p"; p: number }
  | { op: "restore"; slot: number };

export class LogitState {
  private readonly buf: VocabBuffers;
  private readonly topIds = new Int32Array(TOP_K_CAPACITY);
  /** How many ranks topIds holds (fewer than asked when fewer tokens are finite); −1: none. */
  private topCount = -1;
  /** How many ranks were asked for when topIds was filled. */
  private topAsked = 0;
  private cachedEntropy = NaN;
  private cachedLogZ = NaN;
  /** The statistics pass left exp(logit − cachedMax) in the buffer's weights, for these
   * logits (llama.cpp's kernel writes them): logit_top_p then needs no exponentials. */
  private weightsFresh = false;
  private cachedMax = NaN;
  /** Whether the buffer's block maxima belong to the current logits (a stats pass left them). */
  private maximaFresh = false;
  private readonly snapshots: Array<Float32Array | undefined> = new Array(SNAPSHOT_SLOTS);
  /** The slot whose snapshot the buffer's scratch (beside the logits, where the diff kernel
   * reads it) holds, or −1; `scratchOnly`: its `snapshots` entry is older than the scratch. A
   * snapshot is taken into the scratch and copied out only when another slot needs the
   * scratch, so the usual take, restore, diff of one slot copies the vocabulary twice, not
   * three times. */
  private scratchSlot = -1;
  private scratchOnly = false;
  /** Edits made since the last load, in order (for replay on a later step). */
  readonly edits: LogitEdit[] = [];

  constructor(readonly vocabSize: number) {
    this.buf = new VocabBuffers(vocabSize, { scratch: true });
  }

  /** The logits (a view of the buffers; a load's copy is made before it is returned). */
  get logits(): Float32Array {
    return this.buf.logits;
  }

  /** Starts a new step from the engine's logits. Snapshots survive across steps. With the
   * native kernels, the copy waits for the first read, and the statistics pass makes it in
   * its own pass (VocabBuffers.load): `source` must not change until the step has sampled
   * (the engine's buffer changes only at the next decode). */
  load(source: Float32Array): void {
    this.buf.load(source);
    this.edits.length = 0;
    this.invalidate();
  }

  /** Forgets everything from earlier steps, snapshots included: the state of a new sequence
   * (see takeLogitState). */
  reset(): void {
    this.edits.length = 0;
    this.invalidate();
    this.snapshots.fill(undefined);
    this.scratchSlot = -1;
    this.scratchOnly = false;
  }

  private invalidate(): void {
    this.topCount = -1;
    this.cachedEntropy = NaN;
    this.maximaFresh = false;
    this.weightsFresh = false;
  }

  checkToken(id: number): void {
    if (!Number.isInteger(id) || id < 0 || id >= this.vocabSize) {
      throw new RangeError(`token id ${id} is outside the vocabulary 0..${this.vocabSize - 1}`);
    }
  }

  get(id: number): number {
    this.checkToken(id);
    return this.logits[id]!;
  }

  /** Fills topIds through `rank`: the first few ranks (what a hook reads every step) scan a
   * few blocks, all TOP_K_CAPACITY ranks scan as many blocks. */
  private ensureTop(rank: number): void {
    if (this.topCount >= 0) {
      if (rank < this.topCount) return;
      // Fewer found than asked for: no more tokens are finite.
      if (this.topCount < this.topAsked || this.topAsked === TOP_K_CAPACITY) return;
    }
    this.topAsked = rank < FEW_RANKS ? FEW_RANKS : TOP_K_CAPACITY;
    this.topCount = topTokens(this.buf, this.topAsked, this.topIds, this.maximaFresh);
    this.maximaFresh = true;
  }

  topToken(rank: number): number {
    if (Number.isInteger(rank) && rank >= 0) this.ensureTop(rank);
    if (!Number.isInteger(rank) || rank < 0 || rank >= this.topCount) {
      throw new RangeError(`top-k rank ${rank} is outside 0..${this.topCount - 1}`);
    }
    return this.topIds[rank]!;
  }

  topProb(rank: number): number {
    return this.probability(this.topToken(rank));
  }

  /** The most likely token (the lowest id among ties); −1 when every logit is masked. Reuses
   * the top-k when it was computed, the block maxima when a statistics pass left them (then
   * only one block is scanned), else one pass for the block maxima. */
  argmax(): number {
    if (this.topCount >= 0) return this.topCount > 0 ? this.topIds[0]! : -1;
    const best = this.buf.argmax(this.maximaFresh);
    this.maximaFresh = true;
    return best;
  }

  /** Draws the next token from these logits with `sampler`, in this state's buffers: no copy,
   * and no pass for the maximum when a statistics pass left the block maxima. Bias, bans and a
   * repetition penalty of `history` are applied in place for the draw and undone after it
   * (the logits, and what was computed on them, stay as they were). */
  sampleWith(sampler: Sampler, history?: ArrayLike<number>): number {
    const edits = !sampler.leavesLogitsAlone(history);
    try {
      return sampler.sampleIn(this.buf, this.maximaFresh, history);
    } finally {
      // The draw's pass for the maximum ran on the edited logits: its block maxima are not
      // these logits' (without edits, they are). It may have written the weights too.
      this.maximaFresh = !edits;
      this.weightsFresh = false;
    }
  }

  /** Entropy in nats, and log Σ exp(logit) from the same pass over the vocabulary. */
  private ensureStats(): void {
    if (!Number.isNaN(this.cachedEntropy)) return;
    const stats = softmaxStats(this.buf);
    this.maximaFresh = true;
    this.weightsFresh = stats.weights;
    this.cachedMax = stats.max;
    this.cachedLogZ = stats.logZ;
    this.cachedEntropy = stats.entropy;
  }

  entropy(): number {
    this.ensureStats();
    return this.cachedEntropy;
  }

  /** Softmax probability of a token at temperature 1. */
  probability(id: number): number {
    this.checkToken(id);
    this.ensureStats();
    return Math.exp(this.logits[id]! - this.cachedLogZ);
  }

  /** Applies an edit now and records it. */
  apply(edit: LogitEdit): void {
    this.applyOnly(edit);
    this.edits.push(edit);
  }

  /** Replays edits recorded on an earlier step onto the current logits. */
  replay(edits: readonly LogitEdit[]): void {
    for (const e of edits) this.apply(e);
  }

  private applyOnly(edit: LogitEdit): void {
    const l = this.logits;
    switch (edit.op) {
      case "set":
        this.checkToken(edit.id);
        l[edit.id] = edit.value;
        break;
      case "temperature":
        if (!(edit.t > 0)) throw new RangeError(`temperature must be positive, got ${edit.t}`);
        this.buf.divide(edit.t);
        break;
      case "mask-below":
        this.buf.maskBelow(edit.threshold, MASKED_LOGIT);
        break;
      case "top-p":
        this.keepNucleus(edit.p);
        break;
      case "restore": {
        const snap = this.snapshot(edit.slot);
        l.set(snap);
        break;
      }
    }
    this.invalidate();
  }

  /** Keeps the smallest most-likely set whose probability reaches p (with every token tied
   * at its edge); masks the rest. */
  private keepNucleus(p: number): void {
    if (!(p > 0 && p <= 1)) throw new RangeError(`top-p must be in (0, 1], got ${p}`);
    const buf = this.buf;
    if (this.weightsFresh) {
      // A hook that read the entropy or a probability first paid for the weights already.
      const max = this.cachedMax;
      maskOutsideNucleus(buf, p, max, 1, Math.exp(this.cachedLogZ - max), MASKED_LOGIT);
      return;
    }
    const sampled = buf.sampledSoftmaxWeights();
    if (sampled) {
      maskOutsideNucleus(buf, p, sampled.shift, 1, sampled.z, MASKED_LOGIT);
      return;
    }
    const max = buf.max();
    if (!(max > -Infinity && max < Infinity)) return;
    maskOutsideNucleus(buf, p, max, 1, buf.softmaxWeights(max), MASKED_LOGIT);
  }

  private checkSlot(slot: number): void {
    if (!Number.isInteger(slot) || slot < 0 || slot >= SNAPSHOT_SLOTS) {
      throw new RangeError(`snapshot slot ${slot} is outside 0..${SNAPSHOT_SLOTS - 1}`);
    }
  }

  takeSnapshot(slot: number): void {
    this.checkSlot(slot);
    this.claimScratch(slot);
    this.buf.scratch!.set(this.logits);
    this.scratchOnly = true;
  }

  /** The logits saved in `slot` (a view that the next snapshot may overwrite). */
  snapshot(slot: number): Float32Array {
    this.checkSlot(slot);
    if (slot === this.scratchSlot) return this.buf.scratch!;
    const snap = this.snapshots[slot];
    if (!snap) throw new RangeError(`snapshot slot ${slot} is empty`);
    return snap;
  }

  /** Σ |current − snapshot| over the vocabulary. */
  diff(slot: number): number {
    if (slot !== this.scratchSlot) {
      const snap = this.snapshot(slot);
      this.claimScratch(slot);
      this.buf.scratch!.set(snap);
    }
    return this.buf.absDiffScratch();
  }

  /** Makes the scratch hold `slot`, first saving the snapshot it held when only it has it. */
  private claimScratch(slot: number): void {
    if (slot === this.scratchSlot) return;
    const held = this.scratchSlot;
    if (held >= 0 && this.scratchOnly)
      (this.snapshots[held] ??= new Float32Array(this.vocabSize)).set(this.buf.scratch!);
    this.scratchSlot = slot;
    this.scratchOnly = false;
  }
}
