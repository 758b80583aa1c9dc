// ruffian-nano parity: the shipped GGUF, run by llama.cpp through node-llama-cpp, writes the same
// greedy tokens as the PyTorch model it was exported from (references from training/parity.py).
// As in-band, the references append the VM's result right after the region; both the region and
// the final sentence written after the injected result are compared token for token. The same
// holds for ruffian-nano-tools: there the tool call is the "region" and the host's tool message the
// "injection".
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { getLlama, LlamaLogLevel } from "node-llama-cpp";
import { greedyAfter } from "./greedy.js";
import {
  nanoModelPath,
  nanoParityPath,
  nanoToolsModelPath,
  nanoToolsParityPath,
} from "../../src/paths.js";
import { BOS_ID, encodeNano } from "../../src/nano/vocab.js";

interface Reference {
  prompt: string;
  /** The most tokens the reference was allowed to write. */
  max: number;
  tokens: number[];
  /** Where the result was injected (token index in `tokens`), and the injected text. */
  injectedAt?: number;
  injected?: string;
}

async function checkParity(modelPath: string, parityPath: string): Promise<void> {
  const refs = JSON.parse(readFileSync(parityPath, "utf8")) as Reference[];
  assert.equal(refs.length, 16, "one reference per task");
  assert.ok(
    refs.every((r) => r.injectedAt !== undefined),
    "every reference wrote its region",
  );
  const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
  const model = await llama.loadModel({ modelPath });
  const context = await model.createContext({ contextSize: 512, threads: 1 });
  try {
    for (const ref of refs) {
      const prompt = [BOS_ID, ...encodeNano(ref.prompt)];
      assert.deepEqual(Array.from(model.tokenize(ref.prompt)), prompt.slice(1));
      const at = ref.injectedAt!;
      const region = await greedyAfter(model, context, prompt, at);
      assert.deepEqual(region, ref.tokens.slice(0, at), `region for ${JSON.stringify(ref.prompt)}`);
      const injected = encodeNano(ref.injected!);
      assert.deepEqual(ref.tokens.slice(at, at + injected.length), injected);
      const head = ref.tokens.slice(0, at + injected.length);
      const answer = await greedyAfter(model, context, [...prompt, ...head], ref.max - head.length);
      assert.deepEqual(
        answer,
        ref.tokens.slice(head.length),
        `answer after ${JSON.stringify(ref.injected)} for ${JSON.stringify(ref.prompt)}`,
      );
    }
  } finally {
    await context.dispose();
    await model.dispose();
  }
}

test("the GGUF writes the trained model's greedy tokens: region, and answer after the injection", () =>
  checkParity(nanoModelPath, nanoParityPath));

test("ruffian-nano-tools writes PyTorch's tokens: the tool call, and the answer after the tool message", () =>
  checkParity(nanoToolsModelPath, nanoToolsParityPath));
