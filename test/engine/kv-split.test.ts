// kvUnified: false gives every sequence its own KV stream. Batched greedy decoding must match the
// unified cache token for token; a sequence is full at its own share of the context; glass-box
// reads are off (llama.cpp may reorder the batch).
import { test } from "node:test";
import assert from "node:assert/strict";
import { openEngine } from "../../src/engine/open.js";
import type { Engine } from "../../src/engine/types.js";
import { EngineError } from "../../src/engine/errors.js";
import { argmax, storiesModelPath } from "./helpers.js";

const prompts = ["Once upon a time", "The cat", "Lily and Tom went to the park", "One day"];

function batchedGreedy(engine: Engine, steps: number): number[][] {
  const out = prompts.map(() => [] as number[]);
  engine.decode(
    prompts.map((p, seq) => ({ seq, tokens: engine.tokenize(p, { addSpecial: true }) })),
  );
  for (let step = 0; step < steps; step++) {
    const items = prompts.map((_, seq) => {
      const t = argmax(engine.logits(seq));
      out[seq]!.push(t);
      return { seq, tokens: [t] };
    });
    engine.decode(items);
  }
  return out;
}

test("split KV streams decode a batch exactly like the unified cache", async () => {
  const unified = await openEngine(storiesModelPath, { sequences: 4, contextSize: 1024 });
  const split = await openEngine(storiesModelPath, {
    sequences: 4,
    contextSize: 1024,
    kvUnified: false,
  });
  try {
    assert.equal(split.capabilities.reads.hidden, false);
    assert.equal(split.capabilities.steer, false);
    const a = batchedGreedy(unified, 40);
    const b = batchedGreedy(split, 40);
    assert.deepEqual(b, a);
    assert.ok(new Set(a.map((t) => t.join())).size === prompts.length, "sequences differ");
  } finally {
    unified.dispose();
    split.dispose();
  }
});

test("with split KV a sequence is full at its own share of the context", async () => {
  const split = await openEngine(storiesModelPath, {
    sequences: 2,
    contextSize: 64,
    kvUnified: false,
  });
  try {
    const share = split.capabilities.contextSize / 2;
    split.decode([{ seq: 0, tokens: new Array(share).fill(1) }]);
    assert.throws(
      () => split.decode([{ seq: 0, tokens: [1] }]),
      (e: unknown) =>
        e instanceof EngineError && e.code === "context-full" && /sequence 0/.test(e.message),
    );
    split.decode([{ seq: 1, tokens: new Array(share).fill(1) }]);
  } finally {
    split.dispose();
  }
});
