// The inputs of ruffian-nano-qwen's parity check, tokenized by llama.cpp with the real Qwen2
// vocabulary: one held-out question per task in Qwen's ChatML (default system turn), the ids of the
// region the model should write, and the ids the runtime injects after it (continuationTokens).
// training/parity-qwen.py runs the PyTorch model on them; test/nano/qwen-parity.test.ts checks
// that llama.cpp, on the exported GGUF, writes the same tokens.
//   node dist/src/nano/qwen-parity-prompts.js eval/nano-questions.jsonl OUT.jsonl
import { readFileSync, writeFileSync } from "node:fs";
import { continuationTokens } from "../decode/continuation.js";
import { openEngine } from "../engine/open.js";
import type { Engine } from "../engine/types.js";
import { ensureRealVocabModel } from "../models/real-vocab-model.js";
import { QWEN_DEFAULT_SYSTEM, chatmlPrompt } from "./chatml-tokens.js";

export interface QwenParityPrompt {
  question: string;
  /** The ChatML prompt's ids, as the loop tokenizes a rendered prompt. */
  prompt: number[];
  /** The region the model writes first, tokenized as it stands at the start of the turn. */
  region: number[];
  /** The ids of the injected ` = VM[result]`. */
  injected: number[];
}

export function qwenParityPrompt(
  engine: Engine,
  q: { question: string; code: string; result: string },
): QwenParityPrompt {
  return {
    question: q.question,
    prompt: engine.tokenize(chatmlPrompt(q.question, QWEN_DEFAULT_SYSTEM), {
      addSpecial: true,
      parseSpecial: true,
    }),
    region: engine.tokenize(q.code, { addSpecial: false }),
    injected: continuationTokens(engine, ` = VM[${q.result}]`),
  };
}

async function main(): Promise<void> {
  const [questions, out] = process.argv.slice(2);
  if (!questions || !out) throw new Error("usage: QUESTIONS.jsonl OUT.jsonl");
  const engine = await openEngine(await ensureRealVocabModel({ vocabulary: "qwen2" }), {
    contextSize: 256,
  });
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const line of readFileSync(questions, "utf8").split("\n")) {
    if (!line.trim()) continue;
    const q = JSON.parse(line) as { task: string; question: string; code: string; result: string };
    if (seen.has(q.task)) continue;
    seen.add(q.task);
    lines.push(JSON.stringify(qwenParityPrompt(engine, q)));
  }
  writeFileSync(out, lines.join("\n") + "\n");
  engine.dispose();
  console.error(`wrote ${lines.length} parity prompts to ${out}`);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
