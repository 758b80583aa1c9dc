// ruffian-nano parity: the shipped GGUF, run by llama.cpp through node-llama-cpp, writes the same
// greedy tokens as the PyTorch model it was exported from (references from training/parity.py).
// Compared: everything the model writes up to the end of its [C: …] region. In-band, the runtime
// injects the result right there; without injection the model would next guess the result's
// digits, where near-ties between two float implementations may legitimately break differently.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { getLlama, LlamaLogLevel, type Token } from "node-llama-cpp";
import { nanoModelPath, nanoParityPath } from "../../src/paths.js";
import { BOS_ID, NANO_VOCAB, SPACE_PIECE, encodeNano } from "../../src/nano/vocab.js";

interface Reference {
  prompt: string;
  /** The most tokens the reference was allowed to write. */
  max: number;
  tokens: number[];
}

test("the GGUF gives the trained model's greedy tokens for every task's prompt", async () => {
  const refs = JSON.parse(readFileSync(nanoParityPath, "utf8")) as Reference[];
  assert.ok(refs.length >= 10);
  const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
  const model = await llama.loadModel({ modelPath: nanoModelPath });
  const context = await model.createContext({ contextSize: 512, threads: 1 });
  try {
    for (const ref of refs) {
      const input = [BOS_ID, ...encodeNano(ref.prompt)] as Token[];
      assert.deepEqual(Array.from(model.tokenize(ref.prompt)), input.slice(1));
      const seq = context.getSequence();
      const out: number[] = [];
      // The reference stops at EOS or at its length cap; so must we.
      for await (const t of seq.evaluate(input, { temperature: 0 })) {
        if (model.isEogToken(t)) break;
        out.push(t);
        if (out.length >= ref.max) break;
      }
      seq.dispose();
      // One token per character here, so a character offset is a token index.
      const text = ref.tokens.map((t) => NANO_VOCAB[t]!.text).join("");
      const close = text.indexOf("]" + SPACE_PIECE + "=" + SPACE_PIECE + "VM[");
      const upTo = close >= 0 ? close + 1 : ref.tokens.length;
      assert.ok(
        close >= 0 || out.length === ref.tokens.length,
        "no region: whole answers compared",
      );
      assert.deepEqual(
        out.slice(0, upTo),
        ref.tokens.slice(0, upTo),
        `prompt ${JSON.stringify(ref.prompt)}`,
      );
    }
  } finally {
    await context.dispose();
    await model.dispose();
  }
});
