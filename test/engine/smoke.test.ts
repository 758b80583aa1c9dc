// Engine smoke test: the shipped stories260K model, loaded through node-llama-cpp on CPU,
// continues "Once upon a time" greedily with the known deterministic text.
import { test } from "node:test";
import assert from "node:assert/strict";
import { storiesModelPath } from "../../src/paths.js";
import { greedyContinue, loadNodeLlamaModel } from "../../src/engine/node-llama-cpp.js";
import { defaultThreadCount } from "../../src/engine/threads.js";
import { availableParallelism } from "node:os";

test("greedy continuation of the shipped model is the known text", async () => {
  const loaded = await loadNodeLlamaModel(storiesModelPath, { device: "cpu" });
  try {
    let text = "";
    const entropies: number[] = [];
    for await (const step of greedyContinue(loaded, "Once upon a time", 40)) {
      text += step.text;
      entropies.push(step.entropy);
      if (text.length >= 80) break;
    }
    assert.ok(
      text.startsWith(
        ", there was a little girl named Lily. She loved to play outside in the park.",
      ),
      `unexpected continuation: ${JSON.stringify(text)}`,
    );
    assert.ok(entropies.every((h) => Number.isFinite(h) && h >= 0));
  } finally {
    await loaded.dispose();
  }
});

test("thread count follows the real core count", () => {
  const saved = process.env.RUFFIAN_THREADS;
  delete process.env.RUFFIAN_THREADS;
  try {
    assert.equal(defaultThreadCount(), Math.max(1, availableParallelism() - 1));
  } finally {
    if (saved !== undefined) process.env.RUFFIAN_THREADS = saved;
  }
});

test("a missing model file is a clear error", async () => {
  await assert.rejects(
    loadNodeLlamaModel("/nonexistent/model.gguf", { device: "cpu" }),
    /model file not found: \/nonexistent\/model.gguf/,
  );
});
