// The tensor sets and metadata of the GGUF architectures the project writes (llama, qwen2, phi3), as
// llama.cpp's loaders expect them: qwen2 adds q/k/v biases (and an optional output bias), phi3 fuses
// q/k/v into attn_qkv and gate/up into one ffn_up of twice the width.
import type { GgufValue } from "../nano/gguf-writer.js";
import type { LlamaConfig, NamedWeight } from "../nano/llama-gguf.js";

export type Architecture = "llama" | "qwen2" | "phi3";

/** The hyper-parameters every architecture here shares: those of ruffian-nano's llama config. */
export type TransformerConfig = LlamaConfig;

/** One tensor: its GGUF name and PyTorch shape ([out, in] for a weight matrix). */
export interface TensorShape {
  name: string;
  shape: number[];
}

/** Every tensor the architecture's loader needs, in file order. `outputBias`: qwen2's optional
 * output.bias (a per-token constant added to the logits). */
export function tensorShapes(
  arch: Architecture,
  cfg: TransformerConfig,
  options: { outputBias?: boolean } = {},
): TensorShape[] {
  const hd = cfg.nEmbd / cfg.nHead;
  const kv = cfg.nHeadKv * hd;
  const out: TensorShape[] = [
    { name: "token_embd.weight", shape: [cfg.nVocab, cfg.nEmbd] },
    { name: "output_norm.weight", shape: [cfg.nEmbd] },
    { name: "output.weight", shape: [cfg.nVocab, cfg.nEmbd] },
  ];
  if (options.outputBias) {
    if (arch !== "qwen2") throw new Error(`${arch} has no output bias`);
    out.push({ name: "output.bias", shape: [cfg.nVocab] });
  }
  for (let i = 0; i < cfg.nLayer; i++) {
    const b = (t: string, shape: number[]) => out.push({ name: `blk.${i}.${t}`, shape });
    b("attn_norm.weight", [cfg.nEmbd]);
    if (arch === "phi3") {
      b("attn_qkv.weight", [cfg.nEmbd + 2 * kv, cfg.nEmbd]);
    } else {
      b("attn_q.weight", [cfg.nEmbd, cfg.nEmbd]);
      b("attn_k.weight", [kv, cfg.nEmbd]);
      b("attn_v.weight", [kv, cfg.nEmbd]);
      if (arch === "qwen2") {
        b("attn_q.bias", [cfg.nEmbd]);
        b("attn_k.bias", [kv]);
        b("attn_v.bias", [kv]);
      }
    }
    b("attn_output.weight", [cfg.nEmbd, cfg.nEmbd]);
    b("ffn_norm.weight", [cfg.nEmbd]);
    if (arch === "phi3") {
      b("ffn_up.weight", [2 * cfg.nFf, cfg.nEmbd]);
    } else {
      b("ffn_gate.weight", [cfg.nFf, cfg.nEmbd]);
      b("ffn_up.weight", [cfg.nFf, cfg.nEmbd]);
    }
    b("ffn_down.weight", [cfg.nEmbd, cfg.nFf]);
  }
  return out;
}

/** The architecture's hyper-parameter keys ("qwen2.block_count", …). */
export function architectureMetadata(
  arch: Architecture,
  cfg: TransformerConfig,
): Record<string, GgufValue> {
  const k = (key: string) => `${arch}.${key}`;
  return {
    "general.architecture": { type: "string", value: arch },
    [k("context_length")]: { type: "u32", value: cfg.nCtx },
    [k("embedding_length")]: { type: "u32", value: cfg.nEmbd },
    [k("block_count")]: { type: "u32", value: cfg.nLayer },
    [k("feed_forward_length")]: { type: "u32", value: cfg.nFf },
    [k("rope.dimension_count")]: { type: "u32", value: cfg.nEmbd / cfg.nHead },
    [k("rope.freq_base")]: { type: "f32", value: cfg.ropeBase },
    [k("attention.head_count")]: { type: "u32", value: cfg.nHead },
    [k("attention.head_count_kv")]: { type: "u32", value: cfg.nHeadKv },
    [k("attention.layer_norm_rms_epsilon")]: { type: "f32", value: cfg.rmsEps },
    [k("vocab_size")]: { type: "u32", value: cfg.nVocab },
    ...(arch === "phi3"
      ? { [k("rope.scaling.original_context_length")]: { type: "u32", value: cfg.nCtx } }
      : {}),
  } as Record<string, GgufValue>;
}

/** Deterministic weights in [-0.1, 0.1), norms 1, biases small: a function of the seed alone. */
export function randomWeights(shapes: readonly TensorShape[], seed: number): NamedWeight[] {
  let s = seed >>> 0;
  const rand = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return (s / 4294967296 - 0.5) * 0.2;
  };
  return shapes.map(({ name, shape }) => {
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
    const isNorm = name.includes("norm");
    const isBias = name.endsWith(".bias");
    for (let i = 0; i < data.length; i++) data[i] = isNorm ? 1 : isBias ? rand() * 0.1 : rand();
    return { name, shape, data };
  });
}
