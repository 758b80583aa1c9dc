// ruffian-nano-qwen parity: the shipped GGUF (qwen2, Qwen2's full vocabulary, f16 tied embedding,
// output bias over the untrained tokens), run by llama.cpp, writes the same greedy tokens as the
// PyTorch model it was exported from (training/parity-qwen.py). The prompts are Qwen's ChatML with
// its default system turn; the region, then the answer after the runtime's injected ids, are
// compared token for token.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { getLlama, LlamaLogLevel } from "node-llama-cpp";
import { greedyAfter } from "./greedy.js";
import { QWEN_DEFAULT_SYSTEM, chatmlPrompt } from "../../src/nano/chatml-tokens.js";
import { nanoQwenModelPath, nanoQwenParityPath } from "../../src/paths.js";

interface Reference {
  question: string;
  prompt: number[];
  injected: number[];
  max: number;
  tokens: number[];
  injectedAt?: number;
}

test("ruffian-nano-qwen's GGUF writes PyTorch's greedy tokens: region, then answer after the injection", async () => {
  const refs = JSON.parse(readFileSync(nanoQwenParityPath, "utf8")) as Reference[];
  assert.equal(refs.length, 16, "one reference per task");
  assert.ok(
    refs.every((r) => r.injectedAt !== undefined),
    "every reference wrote its region",
  );
  const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
  const model = await llama.loadModel({ modelPath: nanoQwenModelPath });
  assert.equal(model.fileInfo.metadata.general.architecture, "qwen2");
  const context = await model.createContext({ contextSize: 512, threads: 1 });
  const greedy = (input: number[], max: number) => greedyAfter(model, context, input, max);
  try {
    for (const ref of refs) {
      const text = chatmlPrompt(ref.question, QWEN_DEFAULT_SYSTEM);
      assert.deepEqual(Array.from(model.tokenize(text, true)), ref.prompt, "prompt ids");
      const at = ref.injectedAt!;
      const region = await greedy(ref.prompt, at);
      assert.deepEqual(
        region,
        ref.tokens.slice(0, at),
        `region for ${JSON.stringify(ref.question)}`,
      );
      assert.deepEqual(ref.tokens.slice(at, at + ref.injected.length), ref.injected);
      const head = ref.tokens.slice(0, at + ref.injected.length);
      const answer = await greedy([...ref.prompt, ...head], ref.max - head.length);
      assert.deepEqual(
        answer,
        ref.tokens.slice(head.length),
        `answer after the injection for ${JSON.stringify(ref.question)}`,
      );
    }
  } finally {
    await context.dispose();
    await model.dispose();
  }
});
