// Run with cache: decodes a prompt with the needed recordings on and gathers one tensor per hook
// point (positions first, TransformerLens order), ready to write as safetensors.
import type { LlamaEngine } from "../engine/llama/engine.js";
import type { ObserveOptions } from "../engine/types.js";
import { kvKindOf, type HookPoint } from "./hook-points.js";
import type { NamedTensor } from "./safetensors.js";

/** What the engine must record for these hook points. */
export function observationFor(points: readonly HookPoint[]): ObserveOptions {
  const kinds = new Set(points.map((p) => p.kind));
  return {
    hidden: kinds.has("resid_post"),
    attention: kinds.has("pattern"),
    kv: kinds.has("k") || kinds.has("rot_k") || kinds.has("v"),
    // Logits of every position need every row to be an output, which finalNorm asks for.
    finalNorm: kinds.has("normalized") || kinds.has("logits"),
  };
}

function missing(name: string, pos: number): never {
  throw new Error(`${name} was not recorded at position ${pos} (observation budget exceeded?)`);
}

/**
 * Decodes `tokens` into sequence `seq` from position 0 and returns the hook points' tensors.
 * The sequence is cleared first; its recordings stay in the engine afterwards.
 */
export function traceTokens(
  engine: LlamaEngine,
  tokens: readonly number[],
  points: readonly HookPoint[],
  seq = 0,
): NamedTensor[] {
  if (tokens.length === 0) throw new Error("nothing to trace: the prompt has no tokens");
  const caps = engine.capabilities;
  const before = engine.observing();
  engine.truncate(seq, 0);
  engine.observe(observationFor(points));
  const wantLogits = points.some((p) => p.kind === "logits");
  const n = tokens.length;
  const logits = wantLogits ? new Float32Array(n * caps.nVocab) : undefined;
  try {
    // One decode per batch so each captured result_output holds exactly that chunk's rows.
    for (let start = 0; start < n; start += caps.batchSize) {
      const chunk = tokens.slice(start, start + caps.batchSize);
      if (logits) engine.captureNext(["result_output"]);
      engine.decode([{ seq, tokens: chunk }]);
      if (logits) {
        const out = engine.captured("result_output");
        if (!out || out.ne[0] !== caps.nVocab || out.ne[1] !== chunk.length)
          throw new Error("llama.cpp did not produce logits for every traced position");
        logits.set(out.data, start * caps.nVocab);
      }
    }
  } finally {
    engine.observe(before);
  }
  return points.map((p) => gather(engine, p, n, seq, logits));
}

function gather(
  engine: LlamaEngine,
  p: HookPoint,
  n: number,
  seq: number,
  logits: Float32Array | undefined,
): NamedTensor {
  const { nEmbd, nHead, nHeadKv, headDim, nVocab } = engine.capabilities;
  switch (p.kind) {
    case "resid_post":
    case "normalized": {
      const data = new Float32Array(n * nEmbd);
      for (let pos = 0; pos < n; pos++) {
        const row =
          p.kind === "resid_post" ? engine.hidden(seq, p.layer, pos) : engine.finalNorm(seq, pos);
        data.set(row ?? missing(p.name, pos), pos * nEmbd);
      }
      return { name: p.name, shape: [n, nEmbd], data };
    }
    case "k":
    case "rot_k":
    case "v": {
      const width = nHeadKv * headDim;
      const data = new Float32Array(n * width);
      const kind = kvKindOf(p.kind)!;
      for (let pos = 0; pos < n; pos++)
        for (let h = 0; h < nHeadKv; h++) {
          const row = engine.kv(seq, p.layer, h, pos, kind);
          data.set(row ?? missing(p.name, pos), pos * width + h * headDim);
        }
      return { name: p.name, shape: [n, nHeadKv, headDim], data };
    }
    case "pattern": {
      const data = new Float32Array(nHead * n * n);
      for (let h = 0; h < nHead; h++)
        for (let q = 0; q < n; q++) {
          const row = engine.attention(seq, p.layer, h, q) ?? missing(p.name, q);
          data.set(row, (h * n + q) * n);
        }
      return { name: p.name, shape: [nHead, n, n], data };
    }
    case "logits":
      return { name: p.name, shape: [n, nVocab], data: logits! };
  }
}
