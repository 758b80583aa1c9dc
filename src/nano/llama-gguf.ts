// Turns a small llama-architecture model (config + named weights in PyTorch layout) into a GGUF
// file that llama.cpp runs natively, with ruffian-nano's character vocabulary and chat template.
import { writeGguf, type GgufTensor, type GgufValue } from "./gguf-writer.js";
import { NANO_VOCAB, BOS_ID, EOS_ID, UNK_ID, type VocabEntry } from "./vocab.js";
import { randomWeights, tensorShapes } from "../models/architectures.js";

export interface LlamaConfig {
  nVocab: number;
  nEmbd: number;
  nLayer: number;
  nHead: number;
  nHeadKv: number;
  nFf: number;
  nCtx: number;
  rmsEps: number;
  ropeBase: number;
}

/** A weight named as in GGUF ("blk.0.attn_q.weight"), with its PyTorch shape ([out, in]). */
export interface NamedWeight {
  name: string;
  shape: readonly number[];
  data: Float32Array;
}

/** Jinja template equivalent of renderNanoPrompt, for tools that read GGUF chat templates. */
export const NANO_CHAT_TEMPLATE =
  "{% for m in messages %}{% if m['role'] == 'user' %}Q: {{ m['content'] }}\n" +
  "A:{% elif m['role'] == 'assistant' %} {{ m['content'] }}\n{% endif %}{% endfor %}";

/** A SentencePiece-style vocabulary as llama.cpp's "llama" tokenizer reads it from GGUF. */
export interface SpmVocabulary {
  entries: readonly VocabEntry[];
  /** Merge priorities: llama.cpp's SPM tokenizer merges the highest-scoring pair first. */
  scores: ArrayLike<number>;
  bos: number;
  eos: number;
  unk: number;
  /** Whether a space is prepended to the text before tokenizing (SentencePiece's default). */
  addSpacePrefix: boolean;
}

/** ruffian-nano's vocabulary: every score zero, and no space prefix — questions start right
 * after "Q: ", and a SentencePiece space prefix would shift every character. */
export const NANO_SPM_VOCABULARY: SpmVocabulary = {
  entries: NANO_VOCAB,
  scores: new Float32Array(NANO_VOCAB.length),
  bos: BOS_ID,
  eos: EOS_ID,
  unk: UNK_ID,
  addSpacePrefix: false,
};

export function expectedTensorNames(cfg: LlamaConfig): string[] {
  return tensorShapes("llama", cfg).map((t) => t.name);
}

export function writeLlamaGguf(
  path: string,
  cfg: LlamaConfig,
  weights: readonly NamedWeight[],
  extra: Record<string, GgufValue> = {},
  vocab: SpmVocabulary = NANO_SPM_VOCABULARY,
): void {
  if (cfg.nVocab !== vocab.entries.length) {
    throw new Error(
      `config vocabulary ${cfg.nVocab} differs from the tokenizer's ${vocab.entries.length} tokens`,
    );
  }
  const byName = new Map(weights.map((w) => [w.name, w]));
  const missing = expectedTensorNames(cfg).filter((n) => !byName.has(n));
  if (missing.length) throw new Error(`missing tensors: ${missing.join(", ")}`);
  const metadata: Record<string, GgufValue> = {
    "general.architecture": { type: "string", value: "llama" },
    "general.name": { type: "string", value: "ruffian-nano" },
    "general.license": { type: "string", value: "MIT" },
    "llama.context_length": { type: "u32", value: cfg.nCtx },
    "llama.embedding_length": { type: "u32", value: cfg.nEmbd },
    "llama.block_count": { type: "u32", value: cfg.nLayer },
    "llama.feed_forward_length": { type: "u32", value: cfg.nFf },
    "llama.rope.dimension_count": { type: "u32", value: cfg.nEmbd / cfg.nHead },
    "llama.rope.freq_base": { type: "f32", value: cfg.ropeBase },
    "llama.attention.head_count": { type: "u32", value: cfg.nHead },
    "llama.attention.head_count_kv": { type: "u32", value: cfg.nHeadKv },
    "llama.attention.layer_norm_rms_epsilon": { type: "f32", value: cfg.rmsEps },
    "llama.vocab_size": { type: "u32", value: cfg.nVocab },
    "tokenizer.ggml.model": { type: "string", value: "llama" },
    "tokenizer.ggml.tokens": { type: "string[]", value: vocab.entries.map((e) => e.text) },
    "tokenizer.ggml.scores": { type: "f32[]", value: vocab.scores },
    "tokenizer.ggml.token_type": { type: "i32[]", value: vocab.entries.map((e) => e.type) },
    "tokenizer.ggml.bos_token_id": { type: "u32", value: vocab.bos },
    "tokenizer.ggml.eos_token_id": { type: "u32", value: vocab.eos },
    "tokenizer.ggml.unknown_token_id": { type: "u32", value: vocab.unk },
    "tokenizer.ggml.add_bos_token": { type: "bool", value: true },
    "tokenizer.ggml.add_eos_token": { type: "bool", value: false },
    "tokenizer.ggml.add_space_prefix": { type: "bool", value: vocab.addSpacePrefix },
    "tokenizer.chat_template": { type: "string", value: NANO_CHAT_TEMPLATE },
    ...extra,
  };
  const tensors: GgufTensor[] = expectedTensorNames(cfg).map((name) => {
    const w = byName.get(name)!;
    return { name, dims: [...w.shape].reverse(), data: w.data };
  });
  writeGguf(path, metadata, tensors);
}

/** Random weights of the right shapes (for tests of the export path, not for generation quality). */
export function randomLlamaWeights(cfg: LlamaConfig, seed = 1): NamedWeight[] {
  return randomWeights(tensorShapes("llama", cfg), seed);
}
