// The nano export path: a llama-architecture GGUF written by our own writer loads in llama.cpp
// (through node-llama-cpp), tokenizes one token per character, and generates.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getLlama, LlamaLogLevel, type Token } from "node-llama-cpp";
import { randomLlamaWeights, writeLlamaGguf, type LlamaConfig } from "../../src/nano/llama-gguf.js";
import { NANO_VOCAB, encodeNano, BOS_ID } from "../../src/nano/vocab.js";
import { toHalfBits } from "../../src/nano/gguf-writer.js";
import { renderNanoPrompt } from "../../src/nano/format.js";

const cfg: LlamaConfig = {
  nVocab: NANO_VOCAB.length,
  nEmbd: 32,
  nLayer: 2,
  nHead: 4,
  nHeadKv: 2,
  nFf: 64,
  nCtx: 128,
  rmsEps: 1e-5,
  ropeBase: 10000,
};

test("a GGUF from our writer loads in llama.cpp with a one-token-per-character vocabulary", async () => {
  const dir = mkdtempSync(join(tmpdir(), "ruffian-gguf-"));
  const path = join(dir, "tiny.gguf");
  try {
    writeLlamaGguf(path, cfg, randomLlamaWeights(cfg));
    const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
    const model = await llama.loadModel({ modelPath: path });
    try {
      assert.equal(model.fileInfo.metadata.general.architecture, "llama");
      const text = renderNanoPrompt([{ role: "user", text: "What is 4821 times 377?" }]);
      const ids = Array.from(model.tokenize(text));
      assert.deepEqual(ids, encodeNano(text));
      // Every digit is its own token.
      const digits = Array.from(model.tokenize("1817517"));
      assert.equal(digits.length, 7);
      assert.equal(model.detokenize(model.tokenize(text)), text);
      assert.equal(model.tokens.bos, BOS_ID);
      // Non-ASCII text falls back to bytes and round-trips.
      assert.equal(model.detokenize(model.tokenize("7×6 é")), "7×6 é");

      const context = await model.createContext({ contextSize: 128, threads: 1 });
      const seq = context.getSequence();
      const out: number[] = [];
      for await (const t of seq.evaluate([BOS_ID as Token, ...ids], { temperature: 0 })) {
        out.push(t);
        if (out.length >= 5) break;
      }
      assert.equal(out.length, 5);
      assert.ok(out.every((t) => t >= 0 && t < cfg.nVocab));
      await context.dispose();
    } finally {
      await model.dispose();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("f16 tensors are rounded to nearest even, with subnormals, overflow and NaN", () => {
  const cases: Array<[number, number]> = [
    [1, 0x3c00],
    [-2, 0xc000],
    [65504, 0x7bff], // largest half
    [65519.99, 0x7bff],
    [65520, 0x7c00], // rounds up to infinity
    [2 ** -24, 0x0001], // smallest subnormal
    [2 ** -25, 0x0000], // tie rounds to even (zero)
    [3 * 2 ** -25, 0x0002], // tie rounds to even (2)
    [1 + 2 ** -11, 0x3c00], // tie between 1 and its successor → even (1)
    [1 + 3 * 2 ** -11, 0x3c02], // tie → even (successor's successor)
    [1 / 3, 0x3555],
    [-0, 0x8000],
    [Infinity, 0x7c00],
  ];
  for (const [value, bits] of cases) assert.equal(toHalfBits(value), bits, `${value}`);
  assert.equal(toHalfBits(NaN) & 0x7c00, 0x7c00);
  assert.notEqual(toHalfBits(NaN) & 0x3ff, 0);
});
