// Turns ruffian-nano's generated dialogues into Qwen2-token training sequences in ChatML, tokenized
// by llama.cpp itself with the real Qwen2 vocabulary, split exactly as the in-band runtime will see
// them: the prompt as the loop tokenizes it, the region as the model writes it, the injected
// ` = VM[…]` as the loop tokenizes an injection (continuationTokens), then the rest, then
// <|im_end|>. Used by training/train-qwen.py:
//   node dist/src/nano/chatml-tokens.js --in training/data/train-vm.jsonl \
//     --out training/data/qwen-train-vm.jsonl --seed 1
// Each output line: {"ids": […], "mask": […]} (mask 1 where the model is trained to write the
// token). --vocab-out also writes the text of every token id that occurs, for the parity script.
import { createReadStream, writeFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { continuationTokens } from "../decode/continuation.js";
import { openEngine } from "../engine/open.js";
import type { Engine } from "../engine/types.js";
import { ensureRealVocabModel } from "../models/real-vocab-model.js";
import { Rng } from "./tasks.js";

/** Qwen2's default system turn, which its Jinja template writes when the conversation has none. */
export const QWEN_DEFAULT_SYSTEM = "You are a helpful assistant";

/** Other system prompts users write; the model must answer the same under any of them. */
const OTHER_SYSTEMS = [
  "You are a careful assistant that computes exactly.",
  "You are Ruffian, a model that computes while it speaks.",
  "Answer briefly.",
  "You are a helpful math tutor.",
];

/** The ChatML prompt of one user question, opened for the assistant's answer. */
export function chatmlPrompt(question: string, system: string | undefined): string {
  const sys = system === undefined ? "" : `<|im_start|>system\n${system}<|im_end|>\n`;
  return `${sys}<|im_start|>user\n${question}<|im_end|>\n<|im_start|>assistant\n`;
}

export interface DialogueLine {
  question: string;
  completion: string;
  injected?: string;
  code?: string;
}

/** One dialogue as token ids and a loss mask, segmented as the in-band runtime produces it. */
export function chatmlSequence(
  engine: Engine,
  d: DialogueLine,
  system: string | undefined,
  endOfTurn: number,
): { ids: number[]; mask: number[] } {
  const prompt = engine.tokenize(chatmlPrompt(d.question, system), {
    addSpecial: true,
    parseSpecial: true,
  });
  const answer = d.completion.trim();
  const ids = [...prompt];
  const mask = prompt.map(() => 0);
  const push = (tokens: number[], trained: boolean | ((i: number) => boolean)) => {
    tokens.forEach((t, i) => {
      ids.push(t);
      mask.push((typeof trained === "function" ? trained(i) : trained) ? 1 : 0);
    });
  };
  const at = d.injected ? answer.indexOf(d.injected) : -1;
  if (d.injected && at > 0) {
    // The region is the model's own writing from the start of its turn.
    push(engine.tokenize(answer.slice(0, at), { addSpecial: false }), true);
    // The runtime injects the result; " = VM[" stays trained so that with injection off the model
    // still opens it, the result and its "]" carry no loss (it learns to read results).
    const injected = continuationTokens(engine, d.injected);
    const opener = " = VM[";
    let text = "";
    push(injected, (i) => {
      text += engine.tokenText(injected[i]!);
      return text.length <= opener.length && opener.startsWith(text);
    });
    push(continuationTokens(engine, answer.slice(at + d.injected.length)), true);
  } else {
    push(engine.tokenize(answer, { addSpecial: false }), true);
  }
  push([endOfTurn], true);
  return { ids, mask };
}

/** The system turn of the n-th dialogue: mostly Qwen's default, some none, some other prompts. */
export function systemFor(rng: Rng): string | undefined {
  const r = rng.next();
  if (r < 0.6) return QWEN_DEFAULT_SYSTEM;
  if (r < 0.8) return undefined;
  return rng.pick(OTHER_SYSTEMS);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      in: { type: "string" },
      out: { type: "string" },
      seed: { type: "string", default: "1" },
      "vocab-out": { type: "string" },
    },
  });
  if (!values.in || !values.out) throw new Error("usage: --in DIALOGUES.jsonl --out TOKENS.jsonl");
  const engine = await openEngine(await ensureRealVocabModel({ vocabulary: "qwen2" }), {
    contextSize: 256,
  });
  const endOfTurn = engine.tokenize("<|im_end|>", { addSpecial: false, parseSpecial: true });
  if (endOfTurn.length !== 1) throw new Error("<|im_end|> is not one token");
  const rng = new Rng(Number(values.seed));
  const lines: string[] = [];
  const seen = new Set<number>();
  const input = createInterface({ input: createReadStream(values.in) });
  for await (const line of input) {
    if (!line.trim()) continue;
    const seq = chatmlSequence(
      engine,
      JSON.parse(line) as DialogueLine,
      systemFor(rng),
      endOfTurn[0]!,
    );
    for (const t of seq.ids) seen.add(t);
    lines.push(JSON.stringify(seq));
  }
  writeFileSync(values.out, lines.join("\n") + "\n");
  if (values["vocab-out"]) {
    const texts: Record<number, string> = {};
    for (const t of [...seen].sort((a, b) => a - b))
      texts[t] = engine.tokenText(t, { renderSpecial: true });
    writeFileSync(
      values["vocab-out"],
      JSON.stringify({ nVocab: engine.capabilities.nVocab, endOfTurn: endOfTurn[0], texts }),
    );
  }
  console.error(`wrote ${lines.length} sequences (${seen.size} distinct tokens) to ${values.out}`);
  engine.dispose();
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
