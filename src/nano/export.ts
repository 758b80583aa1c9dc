// Converts the training script's output (manifest.json + weights.bin) into a GGUF file:
//   node dist/src/nano/export.js training/out/vm models/ruffian-nano.gguf
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { writeLlamaGguf, type LlamaConfig, type NamedWeight } from "./llama-gguf.js";

interface Manifest {
  config: LlamaConfig;
  tensors: Array<{ name: string; shape: number[]; offset: number }>;
}

export function loadTrainedWeights(dir: string): { config: LlamaConfig; weights: NamedWeight[] } {
  const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as Manifest;
  const blob = readFileSync(join(dir, "weights.bin"));
  const weights = manifest.tensors.map((t) => {
    const count = t.shape.reduce((a, b) => a * b, 1);
    // Copy out of the file buffer: its byte offsets need not be 4-aligned for a Float32Array view.
    const data = new Float32Array(count);
    Buffer.from(data.buffer).set(blob.subarray(t.offset, t.offset + count * 4));
    return { name: t.name, shape: t.shape, data };
  });
  return { config: manifest.config, weights };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [dir, out] = process.argv.slice(2);
  if (!dir || !out) {
    console.error("usage: node dist/src/nano/export.js TRAINING_OUT_DIR OUT.gguf");
    process.exit(1);
  }
  const { config, weights } = loadTrainedWeights(dir);
  writeLlamaGguf(out, config, weights);
  console.error(`wrote ${out}`);
}
