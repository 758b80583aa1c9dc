// Copies a GGUF's tokenizer (tokenizer.* keys: model, pre-tokenizer, tokens, types, scores, merges,
// special ids, flags, chat template) into the writer's typed values, so a model the project writes
// tokenizes exactly as the file it came from.
import { readGguf, type GgufMetaValue } from "../steer/gguf-reader.js";
import type { GgufValue } from "../nano/gguf-writer.js";

function typed(key: string, value: GgufMetaValue): GgufValue {
  if (Array.isArray(value)) {
    if (key.endsWith(".scores")) return { type: "f32[]", value: value as number[] };
    if (key.endsWith(".token_type")) return { type: "i32[]", value: value as number[] };
    if (value.every((v) => typeof v === "string")) return { type: "string[]", value: value as string[] };
    if (value.every((v) => typeof v === "number" && Number.isInteger(v)))
      return { type: "i32[]", value: value as number[] };
    if (value.every((v) => typeof v === "number")) return { type: "f32[]", value: value as number[] };
    throw new Error(`tokenizer key ${key}: an array of mixed values`);
  }
  switch (typeof value) {
    case "string":
      return { type: "string", value };
    case "boolean":
      return { type: "bool", value };
    case "bigint":
      return { type: "u32", value: Number(value) };
    case "number":
      return Number.isInteger(value) && value >= 0 ? { type: "u32", value } : { type: "f32", value };
  }
  throw new Error(`tokenizer key ${key}: unsupported value`);
}

/** Every tokenizer.* key of the file, typed for writeGguf, and the vocabulary size. */
export function tokenizerMetadata(path: string): {
  metadata: Record<string, GgufValue>;
  nVocab: number;
} {
  const file = readGguf(path);
  const metadata: Record<string, GgufValue> = {};
  for (const [key, value] of file.metadata) {
    if (key.startsWith("tokenizer.")) metadata[key] = typed(key, value);
  }
  const tokens = file.metadata.get("tokenizer.ggml.tokens");
  if (!Array.isArray(tokens)) throw new Error(`${path}: no tokenizer.ggml.tokens`);
  return { metadata, nVocab: tokens.length };
}
