// The logit lens: each layer's residual stream put through the model's final RMS norm and
// unembedding, showing what the model would predict if it stopped at that layer.
import type { Engine } from "../engine/types.js";
import { readGguf } from "./gguf-reader.js";

export interface Unembedding {
  nEmbd: number;
  nVocab: number;
  normWeight: Float32Array;
  /** [nVocab][nEmbd], row v is token v's output direction. */
  output: Float32Array;
  eps: number;
}

/** Reads output_norm and the output matrix (token_embd when tied) from the model's GGUF. */
export function loadUnembedding(engine: Engine): Unembedding {
  const path = engine.model.path;
  const file = readGguf(path);
  const { nEmbd, nVocab } = engine.capabilities;
  const outName = file.tensors.has("output.weight") ? "output.weight" : "token_embd.weight";
  if (!file.tensors.has("output_norm.weight") || !file.tensors.has(outName))
    throw new Error(`${path}: no output_norm.weight / ${outName}; the logit lens needs both`);
  const output = file.read(outName);
  if (output.length !== nEmbd * nVocab)
    throw new Error(`${path}: ${outName} is not ${nEmbd}×${nVocab}`);
  const epsText = engine.metadata(`${engine.model.architecture}.attention.layer_norm_rms_epsilon`);
  const eps = epsText !== undefined ? Number(epsText) : 1e-5;
  return { nEmbd, nVocab, normWeight: file.read("output_norm.weight"), output, eps };
}

/** Logits of one residual-stream row: unembed(rmsnorm(x) ⊙ w). */
export function lensLogits(u: Unembedding, x: Float32Array, out = new Float32Array(u.nVocab)) {
  let ss = 0;
  for (let d = 0; d < u.nEmbd; d++) ss += x[d]! * x[d]!;
  const inv = 1 / Math.sqrt(ss / u.nEmbd + u.eps);
  const normed = new Float64Array(u.nEmbd);
  for (let d = 0; d < u.nEmbd; d++) normed[d] = x[d]! * inv * u.normWeight[d]!;
  for (let v = 0; v < u.nVocab; v++) {
    let s = 0;
    const base = v * u.nEmbd;
    for (let d = 0; d < u.nEmbd; d++) s += normed[d]! * u.output[base + d]!;
    out[v] = s;
  }
  return out;
}

export interface TopToken {
  token: number;
  prob: number;
}

/** The k most probable tokens of a logit vector, with softmax probabilities. */
export function topTokens(logits: Float32Array, k: number): TopToken[] {
  let max = -Infinity;
  for (const l of logits) if (l > max) max = l;
  let z = 0;
  for (const l of logits) z += Math.exp(l - max);
  const order = Array.from(logits.keys()).sort((a, b) => logits[b]! - logits[a]!);
  return order.slice(0, k).map((token) => ({ token, prob: Math.exp(logits[token]! - max) / z }));
}

/** Lens predictions for every layer (rows) and position (columns) of a recorded sequence. */
export function logitLens(
  engine: Engine,
  u: Unembedding,
  seq: number,
  positions: number,
  k: number,
): TopToken[][][] {
  const out: TopToken[][][] = [];
  const scratch = new Float32Array(u.nVocab);
  for (let layer = 0; layer < engine.capabilities.nLayer; layer++) {
    const row: TopToken[][] = [];
    for (let pos = 0; pos < positions; pos++) {
      const h = engine.hidden(seq, layer, pos);
      if (!h) throw new Error(`layer ${layer} at position ${pos} was not recorded`);
      row.push(topTokens(lensLogits(u, h, scratch), k));
    }
    out.push(row);
  }
  return out;
}
