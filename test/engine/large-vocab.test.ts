// The engine on a 32,000-token vocabulary (a random-weight model our GGUF writer generates):
// zero-copy logits equal the graph's output, tokenizer agrees with the peer.
import { test } from "node:test";
import assert from "node:assert/strict";
import { openEngine } from "../../src/engine/open.js";
import { loadNodeLlamaModel } from "../../src/engine/node-llama-cpp.js";
import { argmax, greedy, largeVocabModel } from "./helpers.js";

const tinyRandomModelPath = await largeVocabModel();

test("32,000-vocabulary logits are a view equal to result_output", async () => {
  const engine = await openEngine(tinyRandomModelPath, { device: "cpu", contextSize: 256 });
  try {
    assert.equal(engine.capabilities.nVocab, 32000);
    const prompt = engine.tokenize("Hello world, this is a test.", { addSpecial: true });
    engine.captureNext(["result_output"]);
    engine.decode([{ seq: 0, tokens: prompt }]);
    const logits = engine.logits(0);
    assert.equal(logits.length, 32000);
    assert.deepEqual(Array.from(logits), Array.from(engine.captured("result_output")!.data));
    // The same view object is handed out while llama.cpp's buffer stays where it is.
    assert.equal(engine.logits(0), logits);
    const first = argmax(logits);
    const tokens = greedy(engine, 0, 5);
    assert.equal(tokens[0], first);
    engine.observe({ hidden: true, attention: true });
    engine.decode([{ seq: 0, tokens: [tokens.at(-1)!] }]);
    const pos = engine.length(0) - 1;
    assert.equal(engine.hidden(0, 0, pos)?.length, engine.capabilities.nEmbd);
    const att = engine.attention(0, 0, 1, pos)!;
    assert.ok(Math.abs(att.reduce((a, b) => a + b, 0) - 1) < 1e-5);
  } finally {
    engine.dispose();
  }
});

test("32,000-vocabulary tokenization equals node-llama-cpp's", async () => {
  const engine = await openEngine(tinyRandomModelPath, { device: "cpu", contextSize: 64 });
  const peer = await loadNodeLlamaModel(tinyRandomModelPath, { device: "cpu" });
  try {
    const text = "The quick brown fox — naïve café, 12345!";
    const ours = engine.tokenize(text);
    assert.deepEqual(ours, Array.from(peer.model.tokenize(text), Number));
    assert.equal(engine.detokenize(ours), peer.model.detokenize(peer.model.tokenize(text)));
  } finally {
    engine.dispose();
    await peer.dispose();
  }
});
