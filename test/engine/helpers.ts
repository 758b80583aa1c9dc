// Shared helpers for the engine tests: model locations, greedy decoding over the engine, and
// reading weight tensors straight from a GGUF file (an independent path to the numbers).
import { openSync, readSync, closeSync } from "node:fs";
import { readGgufFileInfo } from "node-llama-cpp";
import { storiesModelPath } from "../../src/paths.js";
import { ensureRandomModel } from "../../src/nano/random-model.js";
import type { Engine, Token } from "../../src/engine/types.js";

export { storiesModelPath };

/** A random-weight model with a 32,000-token vocabulary (Llama 2's size), written by our own
 * GGUF writer into the cache on first use. */
export function largeVocabModel(): Promise<string> {
  return ensureRandomModel({ vocab: 32000 });
}

export const STORY_PROMPT = "Once upon a time";
export const STORY_CONTINUATION =
  ", there was a little girl named Lily. She loved to play outside in the park.";

export function argmax(values: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}

/** Greedy continuation of a sequence whose logits are current; returns the chosen tokens. */
export function greedy(engine: Engine, seq: number, count: number): Token[] {
  const out: Token[] = [];
  for (let i = 0; i < count; i++) {
    const next = argmax(engine.logits(seq));
    out.push(next);
    if (engine.isEndOfGeneration(next)) break;
    engine.decode([{ seq, tokens: [next] }]);
  }
  return out;
}

export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return Infinity;
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

/** An F32 tensor read from the GGUF file itself; rows of dimensions[0] values. */
export async function readF32Tensor(
  path: string,
  name: string,
): Promise<{ dims: number[]; data: Float32Array }> {
  const info = await readGgufFileInfo(path);
  const t = info.fullTensorInfo?.find((x) => x.name === name);
  if (!t) throw new Error(`${path} has no tensor ${name}`);
  if (t.ggmlType !== 0) throw new Error(`${name} is not F32 (type ${t.ggmlType})`);
  const dims = t.dimensions.map(Number);
  const count = dims.reduce((a, b) => a * b, 1);
  const buf = Buffer.alloc(count * 4);
  const fd = openSync(path, "r");
  try {
    readSync(fd, buf, 0, buf.length, Number(t.fileOffset));
  } finally {
    closeSync(fd);
  }
  return { dims, data: new Float32Array(buf.buffer, buf.byteOffset, count) };
}

/** llama.cpp's RMS norm: x / sqrt(mean(x²) + eps), times the norm weight. */
export function rmsNorm(x: Float32Array, weight: Float32Array, eps: number): Float64Array {
  let ss = 0;
  for (let i = 0; i < x.length; i++) ss += x[i]! * x[i]!;
  const scale = 1 / Math.sqrt(ss / x.length + eps);
  const out = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) out[i] = x[i]! * scale * weight[i]!;
  return out;
}

/** Rows of `matrix` (each `width` long) dotted with `v`: the output projection. */
export function project(matrix: Float32Array, width: number, v: ArrayLike<number>): Float64Array {
  const rows = matrix.length / width;
  const out = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    let s = 0;
    for (let d = 0; d < width; d++) s += matrix[r * width + d]! * v[d]!;
    out[r] = s;
  }
  return out;
}
