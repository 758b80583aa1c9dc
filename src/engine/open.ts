// Entry point for the rest of Ruffian: turns a model argument (GGUF path or hf: URI) into a
// ready glass-box engine over llama.cpp.
import { openLlamaEngine, type LlamaEngine, type LlamaEngineOptions } from "./llama/engine.js";
import { resolveModelPath, type ResolveOptions } from "./model-source.js";

export type OpenEngineOptions = Omit<LlamaEngineOptions, "modelPath"> & ResolveOptions;

/** Opens a model; `hf:` URIs are downloaded only when options.download is true. */
export async function openEngine(
  model: string,
  options: OpenEngineOptions = {},
): Promise<LlamaEngine> {
  const { download, progress, directory, ...engineOptions } = options;
  const modelPath = await resolveModelPath(model, { download, progress, directory });
  return openLlamaEngine({ ...engineOptions, modelPath });
}

export type { LlamaEngine, LlamaEngineOptions };
