// Engine smoke test: the shipped stories260K model, loaded through node-llama-cpp on CPU,
// continues "Once upon a time" greedily with the known deterministic text.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { packageRoot, storiesModelPath } from "../../src/paths.js";
import { greedyContinue, loadNodeLlamaModel } from "../../src/engine/node-llama-cpp.js";
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

/** The thread count llama.cpp reports for a context opened in a child process. */
function llamaThreads(env: NodeJS.ProcessEnv, cores?: number): number {
  const script = `import { openEngine } from ${JSON.stringify(join(packageRoot, "dist", "src", "engine", "open.js"))};
const engine = await openEngine(${JSON.stringify(storiesModelPath)}, { device: "cpu", contextSize: 64 });
console.log(engine.capabilities.threads);
engine.dispose();`;
  const node = [process.execPath, "--input-type=module", "-e", script];
  // taskset limits the CPUs the child may run on: the "real core count" it sees.
  const argv = cores === undefined ? node : ["taskset", "-c", `0-${cores - 1}`, ...node];
  const r = spawnSync(argv[0]!, argv.slice(1), { env, encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  return Number(r.stdout.trim());
}

test("llama.cpp's thread count follows the cores the process may use, or RUFFIAN_THREADS", () => {
  const env = { ...process.env, RUFFIAN_THREADS: undefined };
  const cores = availableParallelism();
  // One core is left to the JavaScript thread (decode loop, VM), but never fewer than one thread.
  assert.equal(llamaThreads(env, 1), 1);
  if (cores >= 2) assert.equal(llamaThreads(env, 2), 1);
  if (cores >= 3) assert.equal(llamaThreads(env, 3), 2);
  assert.equal(llamaThreads(env), Math.max(1, cores - 1));
  assert.equal(llamaThreads({ ...env, RUFFIAN_THREADS: "3" }, 1), 3);
});

test("a missing model file is a clear error", async () => {
  await assert.rejects(
    loadNodeLlamaModel("/nonexistent/model.gguf", { device: "cpu" }),
    /model file not found: \/nonexistent\/model.gguf/,
  );
});
