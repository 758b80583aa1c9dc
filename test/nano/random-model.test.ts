// The random-weight model generator: exact vocabulary size, same bytes from the same seed, a cache
// hit for the same parameters, and a model that llama.cpp loads, tokenizes into multi-character
// pieces and generates from.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureRandomModel } from "../../src/nano/random-model.js";
import { syntheticSpmVocabulary } from "../../src/nano/random-vocab.js";
import { openEngine } from "../../src/engine/open.js";

const cacheDir = mkdtempSync(join(tmpdir(), "ruffian-random-model-"));
after(() => rmSync(cacheDir, { recursive: true, force: true }));

test("a synthetic vocabulary has exactly the size asked and no duplicate piece", () => {
  for (const size of [400, 32000, 151936]) {
    const vocab = syntheticSpmVocabulary(size);
    assert.equal(vocab.entries.length, size);
    assert.equal(new Set(vocab.entries.map((e) => e.text)).size, size);
    assert.equal(vocab.scores.length, size);
  }
  assert.throws(() => syntheticSpmVocabulary(100), /needs an integer size ≥ 354, got 100/);
});

test("the same parameters and seed give the same file; another seed gives other weights", async () => {
  const a = await ensureRandomModel({ vocab: 1000, cacheDir });
  const again = await ensureRandomModel({ vocab: 1000, cacheDir });
  assert.equal(again, a);
  const b = await ensureRandomModel({ vocab: 1000, seed: 2, cacheDir });
  assert.notEqual(b, a);
  const bytesA = readFileSync(a);
  assert.equal(bytesA.length, statSync(b).size);
  assert.notDeepEqual(readFileSync(b), bytesA);
  // Written afresh into another cache, the bytes are identical: the file is a function of its options.
  const other = mkdtempSync(join(tmpdir(), "ruffian-random-model-"));
  try {
    assert.deepEqual(
      readFileSync(await ensureRandomModel({ vocab: 1000, cacheDir: other })),
      bytesA,
    );
  } finally {
    rmSync(other, { recursive: true, force: true });
  }
});

test("a 32,000-token random model loads in llama.cpp, merges pieces and generates", async () => {
  const path = await ensureRandomModel({ vocab: 32000, embedding: 64, cacheDir });
  const engine = await openEngine(path, { device: "cpu", contextSize: 128 });
  try {
    assert.equal(engine.capabilities.nVocab, 32000);
    assert.equal(engine.capabilities.nEmbd, 64);
    const ids = engine.tokenize(" [C: 6*7]; int main() { return 5; }");
    const pieces = ids.map((id) => engine.tokenText(id));
    for (const piece of [" [", "];", " main", " return"]) assert.ok(pieces.includes(piece), piece);
    assert.equal(engine.detokenize(ids), " [C: 6*7]; int main() { return 5; }");
    engine.decode([{ seq: 0, tokens: engine.tokenize("hello world", { addSpecial: true }) }]);
    const generated: number[] = [];
    for (let i = 0; i < 6; i++) {
      const logits = engine.logits(0);
      let best = 0;
      for (let t = 1; t < logits.length; t++) if (logits[t]! > logits[best]!) best = t;
      generated.push(best);
      engine.decode([{ seq: 0, tokens: [best] }]);
    }
    assert.equal(generated.length, 6);
    assert.ok(engine.detokenize(generated).length > 0);
  } finally {
    engine.dispose();
  }
});
