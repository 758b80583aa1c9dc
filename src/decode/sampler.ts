// Token sampling in TypeScript over a Float32Array of logits, plus the distribution helpers
// (probability, entropy, top-k) that intrinsics and events read. No per-step allocation.
//
// Order of the chain, each step: copy logits → additive bias → bans (-Infinity) → repetition
// penalty (each distinct token of the window once: positive logits divided, negative multiplied,
// as llama.cpp does) → greedy if temperature <= 0 or topK == 1 → scale by 1/temperature → top-k
// → top-p over the mass left by top-k → min-p relative to the most likely token → draw.
// Temperature comes before top-p/min-p, so they act on the distribution actually sampled.
// Cost: top-k and top-p use partial selection (quickselect / mass-partition, expected O(V)),
// never a full sort; every scratch buffer is sized to the vocabulary once in the constructor.

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
  // Scratch, sized once.
  private readonly work: Float32Array;
  private readonly weight: Float32Array;
  private readonly index: Int32Array;
  private readonly seenStamp: Uint32Array;
  private stamp = 0;

  constructor(vocabSize: number, options: SamplerOptions = {}) {
    if (!Number.isInteger(vocabSize) || vocabSize < 1)
      throw new RangeError(`vocabulary size must be a positive integer, got ${vocabSize}`);
    this.vocabSize = vocabSize;
    this.work = new Float32Array(vocabSize);
    this.weight = new Float32Array(vocabSize);
    this.index = new Int32Array(vocabSize);
    this.seenStamp = new Uint32Array(vocabSize);
    this.rng = new Rng(options.seed ?? 0);
    this.configure(options);
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

  /** Picks the next token. `history` is the token sequence so far (its last
   * `repetitionWindow` entries are penalised); it is only read. */
  sample(logits: Float32Array, history?: ArrayLike<number>): number {
    const n = this.prepare(logits, history);
    const work = this.work;
    if (this.temperature <= 0 || this.topK === 1) return argmaxOf(work, n);
    return this.draw(n);
  }

  /** Bias, bans and penalty into `work`; returns the vocabulary size. */
  private prepare(logits: Float32Array, history?: ArrayLike<number>): number {
    const n = this.vocabSize;
    if (logits.length !== n) throw new RangeError(`expected ${n} logits, got ${logits.length}`);
    const work = this.work;
    work.set(logits);
    for (let i = 0; i < this.biasIds.length; i++) work[this.biasIds[i]!]! += this.biasValues[i]!;
    for (let i = 0; i < this.banned.length; i++) work[this.banned[i]!] = -Infinity;
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
        work[id] = v > 0 ? v / penalty : v * penalty;
      }
    }
    return n;
  }

  private draw(vocab: number): number {
    const work = this.work;
    const weight = this.weight;
    const index = this.index;
    let max = -Infinity;
    let n = 0;
    for (let i = 0; i < vocab; i++) {
      const v = work[i]!;
      if (v > -Infinity) {
        index[n++] = i;
        if (v > max) max = v;
      }
    }
    if (n === 0) throw new Error("every token is masked: nothing left to sample");
    // An infinite logit (or bias) is certain: no weights can be formed around it.
    if (max === Infinity) return argmaxOf(work, vocab);
    if (this.topK > 0 && this.topK < n) {
      selectLargest(index, n, this.topK, work);
      n = this.topK;
    }
    const inv = 1 / this.temperature;
    let sum = 0;
    for (let j = 0; j < n; j++) {
      const id = index[j]!;
      const w = Math.exp((work[id]! - max) * inv);
      weight[id] = w;
      sum += w;
    }
    if (this.topP < 1) {
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

  private checkToken(what: string, id: number): void {
    if (!Number.isInteger(id) || id < 0 || id >= this.vocabSize)
      throw new RangeError(`${what} ${id} is outside the vocabulary 0..${this.vocabSize - 1}`);
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

function argmaxOf(values: Float32Array, n: number): number {
  let best = -1;
  let max = -Infinity;
  for (let i = 0; i < n; i++) {
    const v = values[i]!;
    if (v > max) {
      max = v;
      best = i;
    }
  }
  if (best < 0) throw new Error("every token is masked: nothing left to sample");
  return best;
}

/** Reorders index[0..n) so that its first k entries are the k with the largest key (unordered).
 * Quickselect with a median-of-three pivot and Hoare partition (balanced on equal keys). */
export function selectLargest(index: Int32Array, n: number, k: number, key: Float32Array): void {
  let lo = 0;
  let hi = n - 1;
  while (hi > lo) {
    const mid = (lo + hi) >>> 1;
    const a = key[index[lo]!]!;
    const b = key[index[mid]!]!;
    const c = key[index[hi]!]!;
    const pivot = a > b ? (b > c ? b : a > c ? c : a) : a > c ? a : b > c ? c : b;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (key[index[i]!]! > pivot) i++;
      while (key[index[j]!]! < pivot) j--;
      if (i <= j) {
        const t = index[i]!;
        index[i] = index[j]!;
        index[j] = t;
        i++;
        j--;
      }
    }
    // Now [lo..j] >= pivot >= [i..hi], and everything between equals the pivot.
    if (k - 1 <= j) hi = j;
    else if (k - 1 >= i) lo = i;
    else return;
  }
}

/** Reorders index[0..n) so that its first `count` entries are the smallest set of heaviest
 * tokens whose weight reaches `target`; expected O(n) by partitioning on weight. */
export function nucleus(
  index: Int32Array,
  n: number,
  weight: Float32Array,
  target: number,
): { count: number; mass: number } {
  let lo = 0;
  let hi = n;
  let taken = 0;
  while (hi - lo > 0) {
    // Three-way partition of [lo, hi) around a median-of-three pivot: > | == | <.
    const a = weight[index[lo]!]!;
    const b = weight[index[(lo + hi - 1) >>> 1]!]!;
    const c = weight[index[hi - 1]!]!;
    const pivot = a > b ? (b > c ? b : a > c ? c : a) : a > c ? a : b > c ? c : b;
    let gt = lo;
    let i = lo;
    let lt = hi;
    let massGreater = 0;
    let countEqual = 0;
    while (i < lt) {
      const id = index[i]!;
      const w = weight[id]!;
      if (w > pivot) {
        index[i] = index[gt]!;
        index[gt++] = id;
        massGreater += w;
        i++;
      } else if (w < pivot) {
        index[i] = index[--lt]!;
        index[lt] = id;
      } else {
        countEqual++;
        i++;
      }
    }
    if (taken + massGreater >= target && gt > lo) {
      hi = gt;
      continue;
    }
    taken += massGreater;
    const need = pivot > 0 ? Math.ceil((target - taken) / pivot) : countEqual;
    if (need <= countEqual) {
      const used = Math.max(need, 1);
      return { count: gt + used, mass: taken + used * pivot };
    }
    taken += countEqual * pivot;
    lo = lt;
  }
  // Rounding kept `taken` just short of the target: everything scanned so far is the set.
  return { count: Math.max(lo, 1), mass: taken };
}

// ---- distribution helpers (softmax at temperature 1 over the raw logits) ----

export function argmax(logits: Float32Array): number {
  return argmaxOf(logits, logits.length);
}

function maxOf(logits: Float32Array): number {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i]! > max) max = logits[i]!;
  return max;
}

/** Softmax probability of `token`. */
export function tokenProbability(logits: Float32Array, token: number): number {
  if (!(token >= 0 && token < logits.length))
    throw new RangeError(`token ${token} is outside the vocabulary 0..${logits.length - 1}`);
  const max = maxOf(logits);
  let z = 0;
  for (let i = 0; i < logits.length; i++) z += Math.exp(logits[i]! - max);
  return Math.exp(logits[token]! - max) / z;
}

/** Shannon entropy of the softmax distribution, in nats. */
export function entropyNats(logits: Float32Array): number {
  const max = maxOf(logits);
  let z = 0;
  let weighted = 0;
  for (let i = 0; i < logits.length; i++) {
    const x = logits[i]! - max;
    if (x === -Infinity) continue;
    const e = Math.exp(x);
    z += e;
    weighted += e * x;
  }
  // H = -Σ p log p with log p = x - log z.
  return Math.log(z) - weighted / z;
}

/** Writes the k most likely ids (descending) and their probabilities into the caller's arrays;
 * returns how many were written (min of k, vocabulary, output capacity). Uses a min-heap kept
 * in `outIds`, so it allocates nothing. */
export function topKInto(
  logits: Float32Array,
  k: number,
  outIds: Int32Array,
  outProbs: Float32Array,
  /** log Σ exp(logits) when the caller already has it: saves a pass of exp over the vocabulary. */
  logZ?: number,
): number {
  const count = Math.min(k, logits.length, outIds.length, outProbs.length);
  if (count <= 0) return 0;
  const heap = outIds;
  for (let i = 0; i < count; i++) {
    heap[i] = i;
    siftUp(heap, i, logits);
  }
  for (let i = count; i < logits.length; i++) {
    if (logits[i]! > logits[heap[0]!]!) {
      heap[0] = i;
      siftDown(heap, 0, count, logits);
    }
  }
  // Heap-sort in place: repeatedly move the smallest to the end → descending order.
  for (let end = count - 1; end > 0; end--) {
    const t = heap[0]!;
    heap[0] = heap[end]!;
    heap[end] = t;
    siftDown(heap, 0, end, logits);
  }
  if (logZ === undefined) {
    const max = logits[heap[0]!]!;
    let z = 0;
    for (let i = 0; i < logits.length; i++) z += Math.exp(logits[i]! - max);
    logZ = max + Math.log(z);
  }
  for (let i = 0; i < count; i++) outProbs[i] = Math.exp(logits[heap[i]!]! - logZ);
  return count;
}

/** Min-heap on logits[id]; ties put the larger id nearer the root, so the kept set prefers
 * lower ids, as argmax does. */
function heapLess(logits: Float32Array, a: number, b: number): boolean {
  const va = logits[a]!;
  const vb = logits[b]!;
  return va < vb || (va === vb && a > b);
}

function siftUp(heap: Int32Array, i: number, logits: Float32Array): void {
  while (i > 0) {
    const parent = (i - 1) >>> 1;
    if (!heapLess(logits, heap[i]!, heap[parent]!)) return;
    const t = heap[i]!;
    heap[i] = heap[parent]!;
    heap[parent] = t;
    i = parent;
  }
}

function siftDown(heap: Int32Array, i: number, size: number, logits: Float32Array): void {
  for (;;) {
    const l = 2 * i + 1;
    if (l >= size) return;
    const r = l + 1;
    const child = r < size && heapLess(logits, heap[r]!, heap[l]!) ? r : l;
    if (!heapLess(logits, heap[child]!, heap[i]!)) return;
    const t = heap[i]!;
    heap[i] = heap[child]!;
    heap[child] = t;
    i = child;
  }
}
