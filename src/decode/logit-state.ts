// The next-token logits of one sequence at one sampling step, as VM code sees and edits them:
// a private copy of the engine's buffer, with cached top-k/entropy and numbered snapshots.
import { topKInto } from "./sampler.js";

/** How many ranks top_k_token/top_k_prob can reach. */
export const TOP_K_CAPACITY = 64;
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
  readonly logits: Float32Array;
  private readonly topIds = new Int32Array(TOP_K_CAPACITY);
  private readonly topProbs = new Float32Array(TOP_K_CAPACITY);
  private topCount = -1;
  private cachedEntropy = NaN;
  private cachedLogZ = NaN;
  private readonly snapshots: Array<Float32Array | undefined> = new Array(SNAPSHOT_SLOTS);
  /** Edits made since the last load, in order (for replay on a later step). */
  readonly edits: LogitEdit[] = [];
  /** Scratch for the nucleus computation, sized once. */
  private readonly order: Int32Array;

  constructor(readonly vocabSize: number) {
    this.logits = new Float32Array(vocabSize);
    this.order = new Int32Array(vocabSize);
  }

  /** Starts a new step from the engine's logits. Snapshots survive across steps. */
  load(source: Float32Array): void {
    this.logits.set(source);
    this.edits.length = 0;
    this.invalidate();
  }

  private invalidate(): void {
    this.topCount = -1;
    this.cachedEntropy = NaN;
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

  private ensureTop(): void {
    if (this.topCount >= 0) return;
    // One exp pass serves entropy, token probabilities and top-k together.
    this.ensureStats();
    const logZ = this.cachedLogZ;
    this.topCount = topKInto(this.logits, TOP_K_CAPACITY, this.topIds, this.topProbs, logZ);
  }

  topToken(rank: number): number {
    this.ensureTop();
    if (!Number.isInteger(rank) || rank < 0 || rank >= this.topCount) {
      throw new RangeError(`top-k rank ${rank} is outside 0..${this.topCount - 1}`);
    }
    return this.topIds[rank]!;
  }

  topProb(rank: number): number {
    this.topToken(rank);
    return this.topProbs[rank]!;
  }

  argmax(): number {
    return this.topToken(0);
  }

  /** Entropy in nats, and log Σ exp(logit) from the same pass over the vocabulary. */
  private ensureStats(): void {
    if (!Number.isNaN(this.cachedEntropy)) return;
    const l = this.logits;
    let max = -Infinity;
    for (let i = 0; i < l.length; i++) if (l[i]! > max) max = l[i]!;
    let z = 0;
    let weighted = 0;
    for (let i = 0; i < l.length; i++) {
      const x = l[i]! - max;
      if (x === -Infinity) continue;
      const e = Math.exp(x);
      z += e;
      weighted += e * x;
    }
    this.cachedLogZ = max + Math.log(z);
    this.cachedEntropy = Math.log(z) - weighted / z;
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
        for (let i = 0; i < l.length; i++) l[i] = l[i]! / edit.t;
        break;
      case "mask-below":
        for (let i = 0; i < l.length; i++) if (l[i]! < edit.threshold) l[i] = MASKED_LOGIT;
        break;
      case "top-p":
        this.maskOutsideNucleus(edit.p);
        break;
      case "restore": {
        const snap = this.snapshot(edit.slot);
        l.set(snap);
        break;
      }
    }
    this.invalidate();
  }

  /** Keeps the smallest most-likely set whose probability reaches p; masks the rest. */
  private maskOutsideNucleus(p: number): void {
    if (!(p > 0 && p <= 1)) throw new RangeError(`top-p must be in (0, 1], got ${p}`);
    const l = this.logits;
    const order = this.order;
    let max = -Infinity;
    for (let i = 0; i < l.length; i++) {
      order[i] = i;
      if (l[i]! > max) max = l[i]!;
    }
    let z = 0;
    for (let i = 0; i < l.length; i++) z += Math.exp(l[i]! - max);
    // Sorting the whole vocabulary is acceptable here: top-p is an explicit, occasional request.
    order.sort((a, b) => l[b]! - l[a]! || a - b);
    let mass = 0;
    let keep = 0;
    while (keep < l.length && mass < p) mass += Math.exp(l[order[keep++]!]! - max) / z;
    for (let r = keep; r < l.length; r++) l[order[r]!] = MASKED_LOGIT;
  }

  private checkSlot(slot: number): void {
    if (!Number.isInteger(slot) || slot < 0 || slot >= SNAPSHOT_SLOTS) {
      throw new RangeError(`snapshot slot ${slot} is outside 0..${SNAPSHOT_SLOTS - 1}`);
    }
  }

  takeSnapshot(slot: number): void {
    this.checkSlot(slot);
    const snap = (this.snapshots[slot] ??= new Float32Array(this.vocabSize));
    snap.set(this.logits);
  }

  snapshot(slot: number): Float32Array {
    this.checkSlot(slot);
    const snap = this.snapshots[slot];
    if (!snap) throw new RangeError(`snapshot slot ${slot} is empty`);
    return snap;
  }

  /** Σ |current − snapshot| over the vocabulary. */
  diff(slot: number): number {
    const snap = this.snapshot(slot);
    let sum = 0;
    for (let i = 0; i < this.logits.length; i++) sum += Math.abs(this.logits[i]! - snap[i]!);
    return sum;
  }
}
