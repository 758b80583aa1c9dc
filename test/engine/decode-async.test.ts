// decodeAsync: llama_decode on a libuv thread for an engine without the glass-box tap. Its
// logits, lengths and errors must be those of decode(), and while it runs the context is off
// limits (a clear "busy" error) but the vocabulary is not.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { openEngine } from "../../src/engine/open.js";
import { EngineError } from "../../src/engine/errors.js";
import { STORY_PROMPT, argmax, storiesModelPath } from "./helpers.js";

const plain = await openEngine(storiesModelPath, {
  device: "cpu",
  sequences: 2,
  contextSize: 64,
  glassBox: false,
});
const glass = await openEngine(storiesModelPath, { device: "cpu", contextSize: 64 });
after(() => {
  plain.dispose();
  glass.dispose();
});

const prompt = plain.tokenize(STORY_PROMPT, { addSpecial: true });

/** Greedy tokens from the prompt, each decoded by `step`; with every step's logits. */
async function greedyWith(
  step: (tokens: number[]) => Promise<void> | void,
  count: number,
): Promise<{ tokens: number[]; logits: Float32Array[] }> {
  plain.truncate(0, 0);
  plain.decode([{ seq: 0, tokens: prompt }]);
  const tokens: number[] = [];
  const logits: Float32Array[] = [];
  for (let i = 0; i < count; i++) {
    const l = plain.logits(0);
    logits.push(Float32Array.from(l));
    const next = argmax(l);
    tokens.push(next);
    await step([next]);
  }
  return { tokens, logits };
}

test("decodeAsync gives the tokens, logits and lengths decode gives", async () => {
  const sync = await greedyWith((t) => plain.decode([{ seq: 0, tokens: t }]), 12);
  const syncLength = plain.length(0);
  const async = await greedyWith((t) => plain.decodeAsync([{ seq: 0, tokens: t }]), 12);
  assert.deepEqual(async.tokens, sync.tokens);
  for (let i = 0; i < sync.logits.length; i++) assert.deepEqual(async.logits[i], sync.logits[i]);
  assert.equal(plain.length(0), syncLength);
  assert.equal(syncLength, prompt.length + 12);
});

test("while a decode is in flight, context calls throw 'busy' and vocabulary calls work", async () => {
  plain.truncate(0, 0);
  plain.truncate(1, 0);
  plain.decode([{ seq: 0, tokens: prompt }]);
  const token = argmax(plain.logits(0));
  const before = plain.counters.forwardPasses;
  const pending = plain.decodeAsync([{ seq: 0, tokens: [token] }]);
  const busy = (call: () => unknown, name: string) =>
    assert.throws(
      call,
      (e: unknown) => e instanceof EngineError && e.code === "busy" && /in flight/.test(e.message),
      name,
    );
  busy(() => plain.logits(0), "logits");
  busy(() => plain.length(0), "length");
  busy(() => plain.freeCells(0), "freeCells");
  busy(() => plain.truncate(0, 1), "truncate");
  busy(() => plain.decode([{ seq: 1, tokens: prompt }]), "decode");
  await assert.rejects(plain.decodeAsync([{ seq: 1, tokens: prompt }]), /in flight/);
  // The vocabulary is read-only to llama.cpp's decode.
  assert.equal(plain.detokenize(plain.tokenize(" little girl")), " little girl");
  assert.equal(plain.tokenText(token), plain.detokenize([token]));
  assert.equal(plain.isEndOfGeneration(token), false);
  await pending;
  assert.equal(plain.counters.forwardPasses, before + 1);
  assert.equal(plain.length(0), prompt.length + 1);
  assert.equal(plain.logits(0).length, plain.capabilities.nVocab);
});

test("a decode that does not fit rejects with context-full and leaves the engine usable", async () => {
  plain.truncate(0, 0);
  plain.truncate(1, 0);
  const long = Array.from(
    { length: plain.capabilities.contextSize + 1 },
    (_, i) => prompt[i % prompt.length]!,
  );
  await assert.rejects(
    plain.decodeAsync([{ seq: 0, tokens: long }]),
    (e: unknown) => e instanceof EngineError && e.code === "context-full",
  );
  await plain.decodeAsync([{ seq: 0, tokens: prompt }]);
  assert.equal(plain.length(0), prompt.length);
});

test("with the glass-box tap, decodeAsync decodes before it returns", async () => {
  assert.equal(plain.capabilities.backgroundDecode, true);
  assert.equal(glass.capabilities.backgroundDecode, false);
  glass.truncate(0, 0);
  glass.observe({ hidden: true });
  const pending = glass.decodeAsync([{ seq: 0, tokens: prompt }]);
  // No thread was involved: the context is settled already, and the tap recorded the pass.
  assert.equal(glass.length(0), prompt.length);
  assert.ok(glass.hidden(0, 0, prompt.length - 1));
  await pending;
});

test("dispose during a decode in flight frees the engine when the decode completes", async () => {
  const engine = await openEngine(storiesModelPath, {
    device: "cpu",
    contextSize: 64,
    glassBox: false,
  });
  engine.decode([{ seq: 0, tokens: prompt }]);
  const pending = engine.decodeAsync([{ seq: 0, tokens: [argmax(engine.logits(0))] }]);
  engine.dispose();
  assert.throws(() => engine.tokenize("x"), /disposed/);
  await pending;
  assert.throws(() => engine.logits(0), /disposed/);
});
