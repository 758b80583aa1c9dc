// Converts training/train-qwen.py's output (compact-vocabulary weights) into ruffian-nano-qwen.gguf:
// a qwen2 model over Qwen2's full 151,936-token vocabulary with its real tokenizer and ChatML
// template. Rows of tokens the data never uses get a zero embedding and an output bias of −100, so
// they never win (the trained rows' bias is 0); the output layer stays tied to the embedding, which
// is stored as f16 to halve the file.
//   node dist/src/nano/export-qwen.js training/out/qwen-vm models/ruffian-nano-qwen.gguf
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { GgufTensor } from "./gguf-writer.js";
import { loadTrainedWeights } from "./export.js";
import { vocabularyFile } from "../models/llama-vocab-files.js";
import { writeModelWithTokenizer } from "../models/real-vocab-model.js";
import { tokenizerMetadata } from "../models/tokenizer-metadata.js";

/** The output bias of a token the model was never trained to write. */
export const UNUSED_TOKEN_BIAS = -100;

export function exportQwen(dir: string, out: string): void {
  const { config, weights } = loadTrainedWeights(dir);
  const tokens = (
    JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as { tokens: number[] }
  ).tokens;
  if (tokens.length !== config.nVocab)
    throw new Error(
      `${dir}: ${tokens.length} token ids for a compact vocabulary of ${config.nVocab}`,
    );
  const tokenizer = tokenizerMetadata(vocabularyFile("qwen2"));
  const full = tokenizer.nVocab;
  const dim = config.nEmbd;
  const tensors: GgufTensor[] = weights.map((w) => {
    if (w.name !== "token_embd.weight")
      return { name: w.name, dims: [...w.shape].reverse(), data: w.data };
    const table = new Float32Array(full * dim);
    tokens.forEach((id, row) => table.set(w.data.subarray(row * dim, (row + 1) * dim), id * dim));
    return { name: w.name, dims: [dim, full], data: table, type: "f16" };
  });
  const bias = new Float32Array(full).fill(UNUSED_TOKEN_BIAS);
  for (const id of tokens) bias[id] = 0;
  tensors.push({ name: "output.bias", dims: [full], data: bias });
  writeModelWithTokenizer(out, "qwen2", { ...config, nVocab: full }, tensors, tokenizer, {
    "general.name": { type: "string", value: "ruffian-nano-qwen" },
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [dir, out] = process.argv.slice(2);
  if (!dir || !out) {
    console.error("usage: node dist/src/nano/export-qwen.js TRAINING_OUT_DIR OUT.gguf");
    process.exit(1);
  }
  exportQwen(dir, out);
  console.error(`wrote ${out}`);
}
