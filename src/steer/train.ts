// Training control vectors on the local engine, after repeng: read the residual stream at the
// last token of contrastive examples and take, per layer, the mean difference (positive −
// negative) or repeng's pca_diff (first principal component of the pairwise differences,
// unit length, signed so positives project higher).
import type { Engine } from "../engine/types.js";
import type { ControlVector } from "./control-vector.js";

export type TrainMethod = "pca" | "mean-diff";

export interface TrainOptions {
  method: TrainMethod;
  /** Layers to produce directions for (llama.cpp applies direction.<il> for il ≥ 1). */
  layers: readonly number[];
  seq?: number;
}

/** Parses `1-4`, `2,5` or `1-3,6` against a model's layer count; layer 0 is not allowed. */
export function parseLayers(spec: string, nLayer: number): number[] {
  const out = new Set<number>();
  for (const part of spec.split(",")) {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+))?\s*$/.exec(part);
    if (!m) throw new Error(`--layers: cannot read '${part}' (use e.g. 1-4 or 2,5)`);
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    if (a > b) throw new Error(`--layers: range ${a}-${b} is backwards`);
    for (let l = a; l <= b; l++) {
      if (l < 1 || l >= nLayer)
        throw new Error(
          `--layers: layer ${l} is outside 1..${nLayer - 1} (llama.cpp has no direction.0)`,
        );
      out.add(l);
    }
  }
  return [...out].sort((x, y) => x - y);
}

/** Residual stream (l_out) at the last token of `text`, for each of `layers`. */
function lastTokenHidden(
  engine: Engine,
  text: string,
  layers: readonly number[],
  seq: number,
): Float32Array[] {
  const tokens = engine.tokenize(text, { addSpecial: true });
  if (tokens.length === 0) throw new Error(`example '${text}' has no tokens`);
  engine.truncate(seq, 0);
  engine.decode([{ seq, tokens }]);
  const last = tokens.length - 1;
  return layers.map((l) => {
    const h = engine.hidden(seq, l, last);
    if (!h) throw new Error(`layer ${l} was not recorded (observation budget exceeded?)`);
    return Float32Array.from(h);
  });
}

export function trainControlVector(
  engine: Engine,
  positives: readonly string[],
  negatives: readonly string[],
  options: TrainOptions,
): ControlVector {
  const { method, layers } = options;
  const seq = options.seq ?? 0;
  if (positives.length === 0 || negatives.length === 0)
    throw new Error("training needs at least one positive and one negative example");
  if (method === "pca" && positives.length !== negatives.length)
    throw new Error(
      `--method pca pairs examples line by line: ${positives.length} positive vs ${negatives.length} negative`,
    );
  const before = engine.observing();
  engine.observe({ hidden: true });
  let pos: Float32Array[][];
  let neg: Float32Array[][];
  try {
    pos = positives.map((t) => lastTokenHidden(engine, t, layers, seq));
    neg = negatives.map((t) => lastTokenHidden(engine, t, layers, seq));
  } finally {
    engine.truncate(seq, 0);
    engine.observe(before);
  }
  const nEmbd = engine.capabilities.nEmbd;
  const directions = new Map<number, Float32Array>();
  layers.forEach((layer, i) => {
    const p = pos.map((h) => h[i]!);
    const n = neg.map((h) => h[i]!);
    directions.set(layer, method === "mean-diff" ? meanDiff(p, n, nEmbd) : pcaDiff(p, n, nEmbd));
  });
  return { nEmbd, directions, modelHint: engine.model.architecture };
}

function mean(rows: Float32Array[], nEmbd: number): Float64Array {
  const m = new Float64Array(nEmbd);
  for (const r of rows) for (let d = 0; d < nEmbd; d++) m[d]! += r[d]!;
  for (let d = 0; d < nEmbd; d++) m[d]! /= rows.length;
  return m;
}

function meanDiff(p: Float32Array[], n: Float32Array[], nEmbd: number): Float32Array {
  const a = mean(p, nEmbd);
  const b = mean(n, nEmbd);
  return Float32Array.from(a, (x, d) => x - b[d]!);
}

/**
 * repeng's pca_diff: PCA (centred, as scikit-learn's) of the differences of paired examples,
 * first component by power iteration; sign chosen so most positives project above their pair.
 */
function pcaDiff(p: Float32Array[], n: Float32Array[], nEmbd: number): Float32Array {
  const diffs = p.map((r, i) => Float64Array.from(r, (x, d) => x - n[i]![d]!));
  const centre = new Float64Array(nEmbd);
  for (const r of diffs) for (let d = 0; d < nEmbd; d++) centre[d]! += r[d]! / diffs.length;
  const x = diffs.map((r) => r.map((v, d) => v - centre[d]!));
  // Start from the mean difference (or a fixed vector) so the result is deterministic.
  let v = Float64Array.from(centre);
  if (norm(v) === 0) v = Float64Array.from({ length: nEmbd }, (_, d) => 1 + d / nEmbd);
  scaleTo(v, 1);
  for (let it = 0; it < 500; it++) {
    const next = new Float64Array(nEmbd);
    for (const r of x) {
      let dot = 0;
      for (let d = 0; d < nEmbd; d++) dot += r[d]! * v[d]!;
      for (let d = 0; d < nEmbd; d++) next[d]! += dot * r[d]!;
    }
    if (norm(next) === 0) break; // no variance (e.g. one pair): keep the mean direction
    scaleTo(next, 1);
    let delta = 0;
    for (let d = 0; d < nEmbd; d++) delta = Math.max(delta, Math.abs(next[d]! - v[d]!));
    v = next;
    if (delta < 1e-10) break;
  }
  let larger = 0;
  for (let i = 0; i < p.length; i++) {
    let dp = 0;
    let dn = 0;
    for (let d = 0; d < nEmbd; d++) {
      dp += p[i]![d]! * v[d]!;
      dn += n[i]![d]! * v[d]!;
    }
    if (dp > dn) larger++;
    else if (dp < dn) larger--;
  }
  if (larger < 0) for (let d = 0; d < nEmbd; d++) v[d] = -v[d]!;
  return Float32Array.from(v);
}

function norm(v: Float64Array): number {
  let s = 0;
  for (const x of v) s += x * x;
  return Math.sqrt(s);
}

function scaleTo(v: Float64Array, length: number): void {
  const k = length / norm(v);
  for (let d = 0; d < v.length; d++) v[d]! *= k;
}
