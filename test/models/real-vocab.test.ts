// Real-vocabulary test models: llama.cpp's vocabulary-only GGUFs written out with the architecture of
// each family and random weights. llama.cpp loads them, and tokenizes llama.cpp's own test inputs
// into exactly the ids of its .out files; the chat template travels with the tokenizer.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { ensureRealVocabModel, VOCABULARY_MODELS } from "../../src/models/real-vocab-model.js";
import { REAL_VOCABULARIES, tokenizerTestPairs } from "../../src/models/llama-vocab-files.js";
import { openEngine } from "../../src/engine/open.js";

for (const vocabulary of REAL_VOCABULARIES) {
  test(`${vocabulary}: the written ${VOCABULARY_MODELS[vocabulary].architecture} model tokenizes llama.cpp's test inputs into its .out ids`, async () => {
    const path = await ensureRealVocabModel({ vocabulary });
    const engine = await openEngine(path, { contextSize: 512 });
    try {
      assert.equal(engine.model.architecture, VOCABULARY_MODELS[vocabulary].architecture);
      const pairs = tokenizerTestPairs(vocabulary);
      assert.ok(pairs.length >= 40, `only ${pairs.length} test pairs`);
      for (const { text, ids } of pairs) {
        assert.deepEqual(engine.tokenize(text, { addSpecial: false }), ids, JSON.stringify(text));
      }
      // The model runs: one forward pass gives finite logits over the whole vocabulary.
      engine.decode([{ seq: 0, tokens: engine.tokenize("Hello world") }]);
      const logits = engine.logits(0);
      assert.equal(logits.length, engine.capabilities.nVocab);
      assert.ok(logits.every(Number.isFinite));
    } finally {
      engine.dispose();
    }
  });
}

test("the model files are a function of their options, and the chat template travels with them", async () => {
  const a = await ensureRealVocabModel({ vocabulary: "qwen2" });
  assert.equal(await ensureRealVocabModel({ vocabulary: "qwen2" }), a);
  const b = await ensureRealVocabModel({ vocabulary: "qwen2", seed: 2 });
  assert.notEqual(b, a);
  assert.notDeepEqual(readFileSync(b), readFileSync(a));
  for (const [vocabulary, marker] of [
    ["qwen2", "<|im_start|>"],
    ["llama-bpe", "<|eot_id|>"],
    ["phi-3", "<|end|>"],
  ] as const) {
    const engine = await openEngine(await ensureRealVocabModel({ vocabulary }), {
      contextSize: 256,
    });
    try {
      assert.match(engine.model.chatTemplate ?? "", new RegExp(marker.replace(/\|/g, "\\|")));
    } finally {
      engine.dispose();
    }
  }
});
