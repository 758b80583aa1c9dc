// `--control-vector FILE[:SCALE]` (repeatable, summed as llama.cpp does) for run and chat: loads,
// checks and combines the files, and names each one (its basename) for VM code's cvec_load().
import { basename } from "node:path";
import type { Engine } from "../engine/types.js";
import {
  checkFits,
  parseVectorArgument,
  readControlVector,
  scaledDirections,
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
    for (const [layer, v] of scaledDirections(cv, scale)) {
      const sum = combined.get(layer);
      if (sum) for (let i = 0; i < v.length; i++) sum[i]! += v[i]!;
      else combined.set(layer, v);
    }
  }
  return { combined, library };
}

/** Applies `--control-vector` arguments to a sequence; returns the named library. */
export function applyVectorArguments(
  args: readonly string[] | undefined,
  engine: Engine,
  seq = 0,
): Map<string, ControlVector> {
  if (!args || args.length === 0) return new Map();
  const { combined, library } = loadVectorArguments(args, engine);
  engine.setControlVector(seq, combined);
  return library;
}
