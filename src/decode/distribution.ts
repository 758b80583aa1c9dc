// The next-token distribution over a whole vocabulary, computed once for everyone who needs it:
// softmax normaliser and entropy, the k most likely tokens, the nucleus (top-p). The sampler,
// LogitState (token statistics, top_k_*, vocab_entropy, logit_top_p) all call these.
//
// Each is one or a few SIMD passes over the logits (vocab-kernels.ts) plus work on the few
// candidates they leave. Exactness by arithmetic: sums are float64; a token in a block whose
// maximum lies 40 nats below the most likely one (or 85.5 below its block's) is left out of the
// normaliser, which changes it by less than V·e^−40 (< 5e-12 relative for any vocabulary below
// 10^6 tokens); the float32 exponential is accurate to a few ulp, so probabilities and entropy
// agree with a float64 computation to well within 1e-6.
import { VocabBuffers } from "./vocab-kernels.js";

export interface SoftmaxStats {
  /** The largest logit. */
  max: number;
  /** log Σ exp(logit). */
  logZ: number;
  /** Shannon entropy in nats. */
  entropy: number;
  /** Whether the pass left exp(logit − max) in the buffer's weights (their sum is
   * exp(logZ − max)); logit_top_p reuses them. */
  weights: boolean;
}

/** Normaliser and entropy of softmax(logits) at temperature 1. */
export function softmaxStats(buf: VocabBuffers): SoftmaxStats {
  const { max, z, weighted, weights } = buf.softmaxSums();
  if (max === -Infinity) return { max, logZ: -Infinity, entropy: NaN, weights: false };
  // An infinite logit takes all the mass.
  if (max === Infinity) return { max, logZ: Infinity, entropy: 0, weights: false };
  // H = −Σ p log p with log p = d − log z, d = logit − max.
  return { max, logZ: max + Math.log(z), entropy: Math.log(z) - weighted / z, weights };
}

/** Logits of a strided sample of the vocabulary, reused between calls. */
const SAMPLE = 512;
/** The nucleus's edge is narrowed to this many sampled ranks before collecting the tokens
 * between them (GRANULE / SAMPLE of the vocabulary at most: 2,400 tokens at 151,936). */
const GRANULE = 8;
/** How many sampled ranks a probe steps past the predicted edge (see maskOutsideNucleus). */
const OVERSHOOT = GRANULE / 4;
/** Vocabularies up to this size are partitioned whole: cheaper than sampling them. */
const SMALL_VOCABULARY = 4 * SAMPLE;
/** The sample's estimated mass at or above each of its logits (see maskOutsideNucleus). */
const estimated = new Float64Array(SAMPLE + 2);
const sample = new Float32Array(SAMPLE);
/** The sample's float32 bits, as integers that sort in the floats' order. */
const sampleBits = new Int32Array(sample.buffer);
const sampleKeys = new Int32Array(SAMPLE);

/** sample[0..n) (no NaN) in descending order, in place: sorted as integer keys, which a typed
 * array sorts ~3× faster than floats (10 against 28 µs for 1,024 here). A negative float's
 * bits, as a signed integer, grow with its magnitude: flipping all but the sign bit orders
 * them (an involution, so it also maps the keys back). */
function sortDescending(n: number): Float32Array {
  for (let i = 0; i < n; i++) {
    const b = sampleBits[i]!;
    sampleKeys[i] = b < 0 ? b ^ 0x7fffffff : b;
  }
  const keys = sampleKeys.subarray(0, n).sort();
  for (let i = 0; i < n; i++) {
    const k = keys[n - 1 - i]!;
    sampleBits[i] = k < 0 ? k ^ 0x7fffffff : k;
  }
  return sample.subarray(0, n);
}

/** 2^x for x ≤ 0 by whole binades. */
const BINADES = Float64Array.from({ length: 1076 }, (_, i) => 2 ** -i);

/** e^d for d ≤ 0 within 0.02%: enough for the sample's estimated masses, which only choose
 * where the exact passes probe (~5 ns against Math.exp's ~25). */
function roughExp(d: number): number {
  const y = -d * Math.LOG2E;
  if (!(y > 0)) return Math.exp(d);
  if (!(y < 1075)) return 0;
  const k = Math.ceil(y);
  const f = k - y; // 2^−y = 2^−k · 2^f, f in [0, 1)
  return BINADES[k]! * (1 + f * (0.6951 + f * (0.2262 + f * 0.0787)));
}

/** A copy of the block maxima for selection, reused between calls. */
let maxima = new Float32Array(0);

/**
 * Writes to `buf.index` a set of token ids that contains the k most likely tokens (and usually
 * a few dozen more); returns its size, which is ≥ k unless fewer than k tokens are finite.
 * The k-th largest block maximum is a threshold that at least k tokens reach (each of those
 * blocks holds one), and only the blocks whose maximum reaches it need scanning. `fresh`: buf.max() ran on these
 * logits, so the block maxima are current.
 */
export function collectTopCandidates(buf: VocabBuffers, k: number, fresh = false): number {
  if (!fresh) buf.max();
  const blocks = buf.blockMaxima.length;
  if (k > blocks) return buf.collect(-Infinity);
  const threshold =
    k <= FEW ? kthLargestFew(buf.blockMaxima, k) : kthLargestCopy(buf.blockMaxima, blocks, k);
  // At most k blocks are scanned unless ties at the threshold bring in more.
  return threshold > -Infinity ? buf.collectAbove(threshold) : buf.collect(-Infinity);
}

/** Up to this k, the k-th largest block maximum is found by keeping the k largest in order in
 * one scan (most maxima fail the first comparison), not by quickselect on a copy (8 ranks of
 * 594 blocks: ~0.5 against ~2 µs). */
const FEW = 8;
const fewLargest = new Float32Array(FEW);

/** The k-th largest (1-based, k ≤ FEW) of values, −Infinity when there are fewer than k; NaN
 * is never among them. */
function kthLargestFew(values: Float32Array, k: number): number {
  const top = fewLargest;
  top.fill(-Infinity, 0, k);
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (!(v > top[k - 1]!)) continue;
    let j = k - 1;
    while (j > 0 && top[j - 1]! < v) {
      top[j] = top[j - 1]!;
      j--;
    }
    top[j] = v;
  }
  return top[k - 1]!;
}

function kthLargestCopy(values: Float32Array, n: number, k: number): number {
  if (maxima.length < n) maxima = new Float32Array(n);
  maxima.set(values);
  return kthLargest(maxima, n, k);
}

/** The k-th largest (1-based) of values[0..n), reordering them (Hoare quickselect). */
function kthLargest(values: Float32Array, n: number, k: number): number {
  let lo = 0;
  let hi = n - 1;
  const want = k - 1;
  while (hi > lo) {
    const pivot = values[(lo + hi) >>> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (values[i]! > pivot) i++;
      while (values[j]! < pivot) j--;
      if (i <= j) {
        const t = values[i]!;
        values[i++] = values[j]!;
        values[j--] = t;
      }
    }
    if (want <= j) hi = j;
    else if (want >= i) lo = i;
    else return values[want]!;
  }
  return values[want]!;
}

/** The k most likely tokens in descending order (ties: lower id first) into `ids`; returns how
 * many were written (fewer when the vocabulary has fewer finite logits). `fresh` as in
 * collectTopCandidates. */
export function topTokens(buf: VocabBuffers, k: number, ids: Int32Array, fresh = false): number {
  const found = collectTopCandidates(buf, k, fresh);
  const count = Math.min(k, found, ids.length);
  const logits = buf.logits;
  const index = buf.index;
  if (found > count) selectLargest(index, found, count, logits);
  // Insertion sort of the few kept.
  for (let i = 0; i < count; i++) {
    const id = index[i]!;
    const v = logits[id]!;
    let j = i;
    while (
      j > 0 &&
      (logits[ids[j - 1]!]! < v || (logits[ids[j - 1]!]! === v && ids[j - 1]! > id))
    ) {
      ids[j] = ids[j - 1]!;
      j--;
    }
    ids[j] = id;
  }
  return count;
}

/**
 * Masks (sets to `masked`) every logit outside the top-p nucleus: after the weights
 * exp((x − shift)·scale) were written to `buf.weights` with their sum `z`, the nucleus is
 * the tokens whose more likely tokens weigh less than p·z together; every token at or above
 * its lowest logit stays (ties at the edge too).
 * A strided sample of the vocabulary, sorted once, predicts where the mass reaches p·z; exact
 * mass passes above sampled logits narrow the edge to a few sampled ranks, one pass masks
 * everything below them and collects the tokens between, and only those are partitioned by
 * weight (and the ones below the edge masked).
 */
export function maskOutsideNucleus(
  buf: VocabBuffers,
  p: number,
  shift: number,
  scale: number,
  z: number,
  masked: number,
): void {
  if (p >= 1) return;
  const target = p * z;
  const logits = buf.logits;
  const n = buf.size;
  if (n <= SMALL_VOCABULARY) {
    // Every token listed, the nucleus partitioned out by weight, one pass masks below its
    // lowest logit.
    const count = buf.collect(-Infinity);
    const index = buf.index;
    buf.maskBelow(
      lowestLogit(logits, index, nucleus(index, count, buf.weights, target).count),
      masked,
    );
    return;
  }
  const stride = Math.floor(n / SAMPLE);
  let taken = 0;
  for (let i = 0; i < n && taken < SAMPLE; i += stride) {
    const v = logits[i]!;
    if (v > -Infinity) sample[taken++] = v; // NaN and masked tokens carry no weight
  }
  const sorted = sortDescending(taken);
  // Boundary r (0..taken + 1): +Infinity, the sampled logits in descending order, −Infinity;
  // massAt(r) is the exact mass at or above it: 0 at r = 0, z at r = taken + 1.
  const boundary = (r: number) => (r <= 0 ? Infinity : r > taken ? -Infinity : sorted[r - 1]!);
  // Each sampled token stands for `stride` tokens: estimated[r] is the mass at or above
  // boundary r so estimated (monotone, but biased: the heavy upper tail of the body, and the
  // strong candidates above the sample, are rare in it or missing). Only its differences near
  // the edge are used: the search starts from the exact ends, 0 above everything and z.
  estimated[0] = 0;
  for (let r = 0; r < taken; r++)
    estimated[r + 1] = estimated[r]! + roughExp((sorted[r]! - shift) * scale) * stride;
  estimated[taken + 1] = estimated[taken]!;
  // Narrow hi < lo, with massAt(hi) < target ≤ massAt(lo), by exact mass passes. Each probe
  // steps from the end nearer the target in mass, by the mass missing, in the estimate's
  // coordinate: near the edge the estimate's mass per sampled rank is that of the tokens there,
  // which the sample predicts well (across the whole bracket it is biased). It steps a quarter
  // granule past the predicted edge, so that two good steps bracket it from both sides; but the
  // first step from lo stops a quarter granule short, to land on a lo just below the edge:
  // then the granule above it is taken at once (speculate). After two probes that moved the
  // same end, one bisection, so that a bad guess costs little. When the nucleus lies above the
  // sample's top (a peaked distribution), the search ends at hi = 0 and the band is every
  // token above boundary(lo).
  let hi = 0;
  let hiMass = 0;
  let lo = taken + 1;
  let loMass = z;
  let lastMoved = 0; // +1: hi moved, −1: lo moved
  let repeats = 0;
  let speculated = false;
  while (lo - hi > GRANULE) {
    const bisect = repeats >= 2;
    let probe = (hi + lo) >>> 1;
    if (!bisect) {
      const fromLo = loMass - target <= target - hiMass;
      const want = fromLo ? estimated[lo]! - (loMass - target) : estimated[hi]! + (target - hiMass);
      // Ranks grow towards lo: from hi, past the edge; from lo, past it once speculated,
      // short of it before.
      const step = fromLo && speculated ? -OVERSHOOT : OVERSHOOT;
      probe = firstAtLeast(estimated, hi, lo, want) + step;
    }
    probe = Math.min(lo - 1, Math.max(hi + 1, probe));
    const mass = buf.massAbove(boundary(probe));
    const moved = mass < target ? 1 : -1;
    repeats = bisect ? 0 : moved === lastMoved ? repeats + 1 : 1;
    lastMoved = moved;
    if (moved > 0) {
      hi = probe;
      hiMass = mass;
    } else {
      lo = probe;
      loMass = mass;
      if (!speculated && !bisect && lo - hi > GRANULE) {
        speculated = true;
        const top = Math.max(hi, lo - GRANULE);
        const above = maskBand(buf, boundary(lo), boundary(top), loMass, target, masked);
        if (above === undefined) return;
        // The edge lies above that band, which is masked now with everything below it.
        lo = top;
        loMass = above;
      }
    }
  }
  maskBand(buf, boundary(lo), boundary(hi), loMass, target, masked, hiMass);
}

/**
 * Masks every token below `from` (the mass at or above it, loMass, is ≥ target, so all of
 * them lie outside the nucleus) in the pass that collects those in [from, to), then those of
 * them outside it. The edge lies in that band when the mass at or above `to` is < target:
 * `toMass` when known, else loMass less the band's weights. Returns undefined when it did;
 * when not, every token of the band is masked too and it returns the mass at or above `to`.
 */
function maskBand(
  buf: VocabBuffers,
  from: number,
  to: number,
  loMass: number,
  target: number,
  masked: number,
  toMass?: number,
): number | undefined {
  const count = buf.maskBelowCollect(from, to, masked);
  const { logits, index, bandLogits, bandWeights } = buf;
  let above = toMass;
  if (above === undefined) {
    let band = 0;
    for (let i = 0; i < count; i++) band += bandWeights[i]!;
    above = loMass - band;
  }
  if (above >= target) {
    for (let i = 0; i < count; i++) logits[index[i]!] = masked;
    return above;
  }
  const cut = edgeLogit(bandLogits, bandWeights, count, target - above);
  for (let i = 0; i < count; i++) if (bandLogits[i]! < cut) logits[index[i]!] = masked;
  return undefined;
}

/** Up to this many tokens edgeLogit selects among copies of them directly: the histogram's
 * increments of one bucket wait on each other (~6 ns a token against ~1 for a plain pass),
 * which only pays where it spares a selection over thousands. */
const FEW_FOR_HISTOGRAM = 1024;
/** Buckets of edgeLogit's histogram: about one per 8 tokens, at most this many. */
const EDGE_BUCKETS = 256;
const bucketMass = new Float64Array(EDGE_BUCKETS);
/** The logits of edgeLogit's bucket that holds the edge, and their weights. */
let edgeLogits = new Float32Array(FEW_FOR_HISTOGRAM);
let edgeWeights = new Float32Array(FEW_FOR_HISTOGRAM);

/**
 * The largest logit c among xs[0..n) (no NaN) such that the weights ws of the tokens whose
 * logit is ≥ c reach `need`; −Infinity when all of them together weigh less (rounding: keep
 * them all). A histogram of the weights by logit (buckets in the logits' order, so that a tie
 * never straddles two) finds the bucket, and only its few tokens are then ordered: three
 * short passes over contiguous arrays (~14 µs for the ~2,100 tokens of the bench's edge at
 * 151,936 tokens, where partitioning them by weight through their scattered ids took ~24).
 * Up to FEW_FOR_HISTOGRAM tokens, a selection among copies. Leaves both arrays as they were.
 */
function edgeLogit(xs: Float32Array, ws: Float32Array, n: number, need: number): number {
  if (n <= FEW_FOR_HISTOGRAM) {
    ensureEdgeCapacity(n);
    edgeLogits.set(xs.subarray(0, n));
    edgeWeights.set(ws.subarray(0, n));
    return selectEdge(edgeLogits, edgeWeights, n, need);
  }
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < n; i++) {
    const x = xs[i]!;
    if (x < min) min = x;
    if (x > max) max = x;
  }
  if (!(max > min)) {
    let all = 0;
    for (let i = 0; i < n; i++) all += ws[i]!;
    return n > 0 && all >= need ? max : -Infinity;
  }
  // bucket(x) = ⌊(x − min)·scale⌋ is monotone in x: higher buckets hold higher logits.
  const buckets = Math.min(EDGE_BUCKETS, Math.max(16, n >> 3));
  const scale = (buckets - 1) / (max - min);
  fillBuckets(xs, ws, n, min, scale, buckets);
  let taken = 0;
  let bucket = buckets - 1;
  for (; bucket >= 0; bucket--) {
    if (taken + bucketMass[bucket]! >= need) break;
    taken += bucketMass[bucket]!;
  }
  if (bucket < 0) return -Infinity;
  return edgeInBucket(xs, ws, n, min, scale, bucket, need - taken);
}

/** bucketMass[b] = Σ ws over the tokens of bucket b, for b < buckets. */
function fillBuckets(
  xs: Float32Array,
  ws: Float32Array,
  n: number,
  min: number,
  scale: number,
  buckets: number,
) {
  bucketMass.fill(0, 0, buckets);
  for (let i = 0; i < n; i++) bucketMass[((xs[i]! - min) * scale) | 0]! += ws[i]!;
}

/** edgeLogit's last step: the tokens of `bucket`, copied out, and the edge among them. */
function edgeInBucket(
  xs: Float32Array,
  ws: Float32Array,
  n: number,
  min: number,
  scale: number,
  bucket: number,
  need: number,
): number {
  let m = 0;
  for (let i = 0; i < n; i++) {
    const x = xs[i]!;
    if ((((x - min) * scale) | 0) !== bucket) continue;
    if (m === edgeLogits.length) ensureEdgeCapacity(m + 1);
    edgeLogits[m] = x;
    edgeWeights[m++] = ws[i]!;
  }
  return selectEdge(edgeLogits, edgeWeights, m, need);
}

/**
 * edgeLogit on arrays it may reorder: quickselect by logit with a three-way partition, the
 * weights' sums deciding which side to keep (expected O(n); ties never split).
 */
function selectEdge(xs: Float32Array, ws: Float32Array, n: number, need: number): number {
  let lo = 0;
  let hi = n;
  let taken = 0;
  while (hi > lo) {
    const a = xs[lo]!;
    const b = xs[(lo + hi - 1) >>> 1]!;
    const c = xs[hi - 1]!;
    const pivot = a > b ? (b > c ? b : a > c ? c : a) : a > c ? a : b > c ? c : b;
    // [lo, gt): > pivot; [gt, i): == pivot; [lt, hi): < pivot.
    let gt = lo;
    let i = lo;
    let lt = hi;
    let greater = 0;
    let equal = 0;
    while (i < lt) {
      const x = xs[i]!;
      const w = ws[i]!;
      if (x > pivot) {
        xs[i] = xs[gt]!;
        ws[i] = ws[gt]!;
        xs[gt] = x;
        ws[gt] = w;
        gt++;
        i++;
        greater += w;
      } else if (x < pivot) {
        lt--;
        xs[i] = xs[lt]!;
        ws[i] = ws[lt]!;
        xs[lt] = x;
        ws[lt] = w;
      } else {
        equal += w;
        i++;
      }
    }
    if (taken + greater >= need) {
      hi = gt;
      continue;
    }
    if (taken + greater + equal >= need) return pivot;
    taken += greater + equal;
    lo = lt;
  }
  return -Infinity;
}

/** Room for n tokens in edgeLogits and edgeWeights (their contents kept). */
function ensureEdgeCapacity(n: number): void {
  if (n <= edgeLogits.length) return;
  const size = Math.max(n, 2 * edgeLogits.length);
  const logits = new Float32Array(size);
  const weights = new Float32Array(size);
  logits.set(edgeLogits);
  weights.set(edgeWeights);
  edgeLogits = logits;
  edgeWeights = weights;
}

function lowestLogit(logits: Float32Array, index: Int32Array, count: number): number {
  let cut = Infinity;
  for (let i = 0; i < count; i++) cut = Math.min(cut, logits[index[i]!]!);
  return cut;
}

/** The first r in [from, to] with values[r] ≥ want (values ascending); `to` when none. */
function firstAtLeast(values: Float64Array, from: number, to: number, want: number): number {
  while (from < to) {
    const mid = (from + to) >>> 1;
    if (values[mid]! >= want) to = mid;
    else from = mid + 1;
  }
  return from;
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
