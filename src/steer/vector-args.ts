// `--control-vector FILE[:SCALE]` (repeatable, summed as llama.cpp does) for run and chat: loads,
// checks and combines the files, and names each one (its basename) for VM code's cvec_load().
import { basename } from "node:path";
import type { Engine } from "../engine/types.js";
import type { LlamaEngine } from "../engine/llama/engine.js";
import {
  checkFits,
  llamaVectorData,
  parseVectorArgument,
  readControlVector,
  addScaled,
  type ControlVector,
} from "./control-vector.js";

export interface LoadedVectors {
  /** The sum of every FILE × SCALE, per layer (empty when none was given). */
  combined: Map<number, Float32Array>;
  /** Each file by basename without .gguf, for cvec_load("name"). */
  library: Map<string, ControlVector>;
}

export function loadVectorArguments(args: readonly string[], engine: Engine): LoadedVectors {
  const combined = new Map<number, Float32Array>();
  const library = new Map<string, ControlVector>();
  for (const arg of args) {
    const { path, scale } = parseVectorArgument(arg);
    const cv = readControlVector(path);
    checkFits(cv, engine.capabilities, path);
    library.set(basename(path).replace(/\.gguf$/i, ""), cv);
    addScaled(combined, cv, scale);
  }
  return { combined, library };
}

/**
 * Applies `--control-vector` arguments to every sequence of a context through llama.cpp's own
 * control vector (what llama.cpp's server does with the same flag).
 */
export function applyToContext(args: readonly string[] | undefined, engine: LlamaEngine): void {
  if (!args || args.length === 0) return;
  const { combined } = loadVectorArguments(args, engine);
  const caps = engine.capabilities;
  const { data, ilStart, ilEnd } = llamaVectorData(combined, caps.nEmbd, caps.nLayer);
  engine.nativeControlVector(data, ilStart, ilEnd);
}

/** The request fields for `--control-vector` arguments (none when there are none). */
export function vectorRequest(
  args: readonly string[] | undefined,
  engine: Engine,
): { controlVector?: Map<number, Float32Array>; vectors?: Map<string, ControlVector> } {
  if (!args || args.length === 0) return {};
  const { combined, library } = loadVectorArguments(args, engine);
  return { controlVector: combined, vectors: library };
}
