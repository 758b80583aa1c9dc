// Random-weight models with real tokenizers: llama.cpp's vocabulary-only GGUFs (Qwen2, Llama 3,
// Phi-3, DeepSeek-Coder, GPT-2) given the architecture that goes with each vocabulary and random
// weights, written by the project's own GGUF writer and cached by their parameters. The weights
// carry no knowledge; tokenization, chat templates, special tokens and the decode loop are real.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { writeGguf, type GgufTensor, type GgufValue } from "../nano/gguf-writer.js";
import { shapeConfig, type ModelShapeOptions } from "../nano/random-model.js";
import {
  architectureMetadata,
  randomWeights,
  tensorShapes,
  type Architecture,
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

export interface RealVocabModelOptions extends ModelShapeOptions {
  vocabulary: RealVocabulary;
  /** Training context the GGUF declares (default 32,768). */
  context?: number;
  /** A Jinja chat template file to store as tokenizer.chat_template instead of the default. */
  chatTemplateFile?: string;
}

/** Bumped whenever the file this module writes changes for the same options. */
const FORMAT_VERSION = 1;

/** Writes a model of `arch` with the tokenizer of `vocabPath` and the given tensors. */
export function writeModelWithTokenizer(
  path: string,
  arch: Architecture,
  cfg: TransformerConfig,
  tensors: readonly GgufTensor[],
  tokenizer: ReturnType<typeof tokenizerMetadata>,
  extra: Record<string, GgufValue> = {},
): void {
  const { metadata, nVocab } = tokenizer;
  if (nVocab !== cfg.nVocab)
    throw new Error(`config vocabulary ${cfg.nVocab} differs from the tokenizer's ${nVocab}`);
  writeGguf(
    path,
    {
      ...architectureMetadata(arch, cfg),
      "general.license": { type: "string", value: "MIT" },
      ...metadata,
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
  // The vocabulary's size is known only from its file, read on a cache miss alone (parsing
  // 151,936 tokens and their merges is most of a cache hit's cost otherwise).
  const shape = shapeConfig(options, 0, { context: 32768, rmsEps: 1e-6 });
  const seed = options.seed ?? 1;
  const templatePath =
    options.chatTemplateFile ?? (spec.template ? llamaTemplateFile(spec.template, dir) : undefined);
  const template = templatePath ? readFileSync(templatePath, "utf8") : undefined;
  const templateTag = template ? `-t${hash(template)}` : "";
  const name =
    `real-${options.vocabulary}-v${FORMAT_VERSION}-${spec.architecture}-e${shape.nEmbd}-l${shape.nLayer}` +
    `-h${shape.nHead}-kv${shape.nHeadKv}-ff${shape.nFf}-ctx${shape.nCtx}-seed${seed}${templateTag}.gguf`;
  const path = join(dir, name);
  if (existsSync(path)) return path;
  mkdirSync(dir, { recursive: true });
  const tokenizer = tokenizerMetadata(vocabularyFile(options.vocabulary, dir));
  const cfg: TransformerConfig = { ...shape, nVocab: tokenizer.nVocab };
  const partial = `${path}.${process.pid}.partial`;
  try {
    writeModelWithTokenizer(
      partial,
      spec.architecture,
      cfg,
      randomWeights(tensorShapes(spec.architecture, cfg), seed).map((w) => ({
        name: w.name,
        dims: [...w.shape].reverse(),
        data: w.data,
      })),
      tokenizer,
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
