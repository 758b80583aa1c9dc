// Float64 references for the distribution computed by the product (distribution.ts): direct
// formulas over every token and a full sort, written plainly so they are easy to trust.

/** Softmax probabilities in float64. */
export function softmax(logits: ArrayLike<number>): Float64Array {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i]! > max) max = logits[i]!;
  const out = new Float64Array(logits.length);
  let z = 0;
  for (let i = 0; i < logits.length; i++) z += out[i] = Math.exp(logits[i]! - max);
  for (let i = 0; i < out.length; i++) out[i]! /= z;
  return out;
}

/** −Σ p log p in nats. */
export function entropyNats(logits: ArrayLike<number>): number {
  const p = softmax(logits);
  let h = 0;
  for (const x of p) if (x > 0) h -= x * Math.log(x);
  return h;
}

/** Ids by descending logit, ties by ascending id. */
export function sortedIds(logits: ArrayLike<number>): number[] {
  return Array.from({ length: logits.length }, (_, i) => i).sort(
    (a, b) => logits[b]! - logits[a]! || a - b,
  );
}

/** The smallest most likely set (full sort) whose probability reaches p. */
export function nucleusByFullSort(logits: ArrayLike<number>, p: number): Set<number> {
  const probs = softmax(logits);
  const kept = new Set<number>();
  let mass = 0;
  for (const id of sortedIds(logits)) {
    if (mass >= p) break;
    kept.add(id);
    mass += probs[id]!;
  }
  return kept;
}
