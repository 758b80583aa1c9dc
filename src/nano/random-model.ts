// Random-weight llama GGUF models of any vocabulary size, written by the project's own GGUF writer
// and cached by their parameters, so tests and benchmarks at 32,000 or 151,936 tokens need no
// downloaded model. The weights carry no knowledge; the model loads, tokenizes and generates.
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../paths.js";
import { randomLlamaWeights, writeLlamaGguf, type LlamaConfig } from "./llama-gguf.js";
import { syntheticSpmVocabulary } from "./random-vocab.js";

/** The shape and seed of a random-weight model (shared with src/models/real-vocab-model.ts). */
export interface ModelShapeOptions {
  /** Embedding width (default 32). */
  embedding?: number;
  /** Transformer blocks (default 2). */
  layers?: number;
  /** Attention heads (default 4); must divide the embedding width. */
  heads?: number;
  /** Key/value heads (default 2); must divide the heads. */
  kvHeads?: number;
  /** Feed-forward width (default 64). */
  feedForward?: number;
  /** Training context the GGUF declares. */
  context?: number;
  /** Seed of the weights: the same options give the same bytes (default 1). */
  seed?: number;
  /** Where models are cached (default node_modules/.cache/ruffian in the package). */
  cacheDir?: string;
}

export interface RandomModelOptions extends ModelShapeOptions {
  /** Tokens in the vocabulary (default 32,000, Llama 2's size). */
  vocab?: number;
  /** Training context the GGUF declares (default 2048). */
  context?: number;
}

/** Bumped whenever the file this module writes changes for the same options. */
const FORMAT_VERSION = 1;

export const defaultRandomModelCache = join(packageRoot, "node_modules", ".cache", "ruffian");

/** The config of a model of this shape over `nVocab` tokens, its context defaulting to
 * `defaults.context`; refuses head counts that do not divide. */
export function shapeConfig(
  options: ModelShapeOptions,
  nVocab: number,
  defaults: { context: number; rmsEps: number },
): LlamaConfig {
  const cfg: LlamaConfig = {
    nVocab,
    nEmbd: options.embedding ?? 32,
    nLayer: options.layers ?? 2,
    nHead: options.heads ?? 4,
    nHeadKv: options.kvHeads ?? 2,
    nFf: options.feedForward ?? 64,
    nCtx: options.context ?? defaults.context,
    rmsEps: defaults.rmsEps,
    ropeBase: 10000,
  };
  if (cfg.nEmbd % cfg.nHead !== 0 || cfg.nHead % cfg.nHeadKv !== 0) {
    throw new Error(
      `random model: heads (${cfg.nHead}) must divide the embedding (${cfg.nEmbd}) and be a multiple of kvHeads (${cfg.nHeadKv})`,
    );
  }
  return cfg;
}

/**
 * The path of a random-weight llama model with these parameters, writing it first if the cache
 * lacks it. Safe when several processes ask at once: each writes a private file and renames it.
 */
export async function ensureRandomModel(options: RandomModelOptions = {}): Promise<string> {
  const cfg = shapeConfig(options, options.vocab ?? 32000, { context: 2048, rmsEps: 1e-5 });
  const seed = options.seed ?? 1;
  const dir = options.cacheDir ?? defaultRandomModelCache;
  const name =
    `random-llama-v${FORMAT_VERSION}-vocab${cfg.nVocab}-e${cfg.nEmbd}-l${cfg.nLayer}` +
    `-h${cfg.nHead}-kv${cfg.nHeadKv}-ff${cfg.nFf}-ctx${cfg.nCtx}-seed${seed}.gguf`;
  const path = join(dir, name);
  if (existsSync(path)) return path;
  mkdirSync(dir, { recursive: true });
  const partial = `${path}.${process.pid}.partial`;
  try {
    writeLlamaGguf(
      partial,
      cfg,
      randomLlamaWeights(cfg, seed),
      { "general.name": { type: "string", value: `random-llama-${cfg.nVocab}` } },
      syntheticSpmVocabulary(cfg.nVocab),
    );
    renameSync(partial, path);
  } finally {
    rmSync(partial, { force: true });
  }
  return path;
}
