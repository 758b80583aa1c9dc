// Random-weight models with real tokenizers: llama.cpp's vocabulary-only GGUFs (Qwen2, Llama 3,
// Phi-3, DeepSeek-Coder, GPT-2) given the architecture that goes with each vocabulary and random
// weights, written by the project's own GGUF writer and cached by their parameters. The weights
// carry no knowledge; tokenization, chat templates, special tokens and the decode loop are real.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { writeGguf, type GgufTensor, type GgufValue } from "../nano/gguf-writer.js";
import {
  architectureMetadata,
  tensorShapes,
  type Architecture,
  type TensorShape,
  type TransformerConfig,
} from "./architectures.js";
import {
  defaultModelCache,
  llamaTemplateFile,
  vocabularyFile,
  type RealVocabulary,
} from "./llama-vocab-files.js";
import { tokenizerMetadata } from "./tokenizer-metadata.js";

/** The architecture each vocabulary's models use, and a chat template from llama.cpp's
 * models/templates where the vocabulary file carries none. */
export const VOCABULARY_MODELS: Record<
  RealVocabulary,
  { architecture: Architecture; template?: string; description: string }
> = {
  qwen2: { architecture: "qwen2", description: "Qwen2 / Qwen2.5 (151,936-token BPE, ChatML)" },
  "llama-bpe": {
    architecture: "llama",
    template: "meta-llama-Llama-3.1-8B-Instruct",
    description: "Llama 3 (128,256-token BPE)",
  },
  "phi-3": { architecture: "phi3", description: "Phi-3 (32,064-token SentencePiece)" },
  "deepseek-coder": { architecture: "llama", description: "DeepSeek-Coder (32,256-token BPE)" },
  "gpt-2": { architecture: "llama", description: "GPT-2 (50,257-token BPE)" },
};

export interface RealVocabModelOptions {
  vocabulary: RealVocabulary;
  /** Embedding width (default 32). */
  embedding?: number;
  /** Transformer blocks (default 2). */
  layers?: number;
  /** Attention heads (default 4). */
  heads?: number;
  /** Key/value heads (default 2: grouped-query attention). */
  kvHeads?: number;
  /** Feed-forward width (default 64). */
  feedForward?: number;
  /** Training context the GGUF declares (default 32,768). */
  context?: number;
  /** Seed of the weights (default 1). */
  seed?: number;
  /** A Jinja chat template file to store as tokenizer.chat_template instead of the default. */
  chatTemplateFile?: string;
  cacheDir?: string;
}

/** Bumped whenever the file this module writes changes for the same options. */
const FORMAT_VERSION = 1;

/** Deterministic weights in [-0.1, 0.1), norms 1, biases small: a function of the seed alone. */
export function randomWeights(shapes: readonly TensorShape[], seed: number): GgufTensor[] {
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
    return { name, dims: [...shape].reverse(), data };
  });
}

/** Writes a model of `arch` with the tokenizer of `vocabPath` and the given tensors. */
export function writeModelWithTokenizer(
  path: string,
  arch: Architecture,
  cfg: TransformerConfig,
  tensors: readonly GgufTensor[],
  vocabPath: string,
  extra: Record<string, GgufValue> = {},
): void {
  const { metadata: tokenizer, nVocab } = tokenizerMetadata(vocabPath);
  if (nVocab !== cfg.nVocab)
    throw new Error(`config vocabulary ${cfg.nVocab} differs from the tokenizer's ${nVocab}`);
  writeGguf(
    path,
    {
      ...architectureMetadata(arch, cfg),
      "general.license": { type: "string", value: "MIT" },
      ...tokenizer,
      ...extra,
    },
    tensors,
  );
}

/**
 * The path of a random-weight model with this real vocabulary, writing it first if the cache
 * lacks it. Safe when several processes ask at once: each writes a private file and renames it.
 */
export async function ensureRealVocabModel(options: RealVocabModelOptions): Promise<string> {
  const spec = VOCABULARY_MODELS[options.vocabulary];
  if (!spec) throw new Error(`unknown vocabulary ${JSON.stringify(options.vocabulary)}`);
  const dir = options.cacheDir ?? defaultModelCache;
  const vocabPath = vocabularyFile(options.vocabulary, dir);
  const { nVocab } = tokenizerMetadata(vocabPath);
  const cfg: TransformerConfig = {
    nVocab,
    nEmbd: options.embedding ?? 32,
    nLayer: options.layers ?? 2,
    nHead: options.heads ?? 4,
    nHeadKv: options.kvHeads ?? 2,
    nFf: options.feedForward ?? 64,
    nCtx: options.context ?? 32768,
    rmsEps: 1e-6,
    ropeBase: 10000,
  };
  if (cfg.nEmbd % cfg.nHead !== 0 || cfg.nHead % cfg.nHeadKv !== 0)
    throw new Error(
      `heads (${cfg.nHead}) must divide the embedding (${cfg.nEmbd}) and be a multiple of kvHeads (${cfg.nHeadKv})`,
    );
  const seed = options.seed ?? 1;
  const templatePath =
    options.chatTemplateFile ?? (spec.template ? llamaTemplateFile(spec.template, dir) : undefined);
  const template = templatePath ? readFileSync(templatePath, "utf8") : undefined;
  const templateTag = template ? `-t${hash(template)}` : "";
  const name =
    `real-${options.vocabulary}-v${FORMAT_VERSION}-${spec.architecture}-e${cfg.nEmbd}-l${cfg.nLayer}` +
    `-h${cfg.nHead}-kv${cfg.nHeadKv}-ff${cfg.nFf}-ctx${cfg.nCtx}-seed${seed}${templateTag}.gguf`;
  const path = join(dir, name);
  if (existsSync(path)) return path;
  mkdirSync(dir, { recursive: true });
  const partial = `${path}.${process.pid}.partial`;
  try {
    writeModelWithTokenizer(
      partial,
      spec.architecture,
      cfg,
      randomWeights(tensorShapes(spec.architecture, cfg), seed),
      vocabPath,
      {
        "general.name": { type: "string", value: `random-${options.vocabulary}` },
        ...(template ? { "tokenizer.chat_template": { type: "string", value: template } } : {}),
      },
    );
    renameSync(partial, path);
  } finally {
    rmSync(partial, { force: true });
  }
  return path;
}

/** FNV-1a of a string, as 8 hex digits (names a template in the cache key). */
function hash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16).padStart(8, "0");
}
