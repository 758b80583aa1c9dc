// A guard on memory in long-lived processes: after thousands of never-seen programs through runC
// and through one VmSession, the JS heap of retained objects (after a full collection) grows by
// under 400 bytes per program and external memory by under 200 (a cache or a scope growing per
// program would retain kilobytes), and the native memory of dead block modules is reclaimed
// every few hundred blocks. bench/vm-memory.ts measures resident memory over 100,000 programs,
// which is where the 10 MB target is judged.
import { test } from "node:test";
import assert from "node:assert/strict";
import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import { VmSession, runC } from "../../src/vm/index.js";
import { MODULES_PER_COLLECTION } from "../../src/vm/reclaim.js";
import { releaseHostBridge } from "../../src/vm/session.js";
import { neverSeenProgram } from "../../bench/vm-programs.js";

v8.setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
const afterGc = (): { heap: number; external: number } => {
  // The bridge table holds the last few blocks (and a runC sandbox's whole memory) until it is
  // renewed: measure without them.
  releaseHostBridge();
  gc();
  gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, external: m.external };
};

/** Retained bytes per program of JS heap and of external memory (array buffers, wasm memories). */
function retainedGrowth(
  run: (i: number) => void,
  count: number,
): { heap: number; external: number } {
  for (let i = 0; i < 300; i++) run(i);
  const before = afterGc();
  for (let i = 300; i < count; i++) run(i);
  const after = afterGc();
  const n = count - 300;
  return { heap: (after.heap - before.heap) / n, external: (after.external - before.external) / n };
}

function assertBounded(growth: { heap: number; external: number }): void {
  assert.ok(growth.heap < 400, `JS heap grew ${growth.heap.toFixed(0)} bytes per program`);
  assert.ok(
    growth.external < 200,
    `external memory grew ${growth.external.toFixed(0)} bytes per program`,
  );
}

test("runC retains under 400 bytes of JS heap and 200 of external memory per program", () => {
  const growth = retainedGrowth((i) => {
    const o = runC(neverSeenProgram(i));
    assert.ok(o.ok && o.stdout.endsWith(` v${i}\n`));
  }, 3000);
  assertBounded(growth);
});

test("one long-lived session retains under 400 bytes of JS heap and 200 of external memory per block", () => {
  const session = new VmSession();
  const growth = retainedGrowth((i) => {
    const o = session.run(`{ ${neverSeenProgram(i)} }`);
    assert.ok(o.ok && o.stdout.endsWith(` v${i}\n`));
  }, 3000);
  assertBounded(growth);
});

// Every never-seen block is a new wasm module whose native memory (outside the JS heap) V8
// frees only in a full collection, which nothing else prompts (src/vm/reclaim.ts). Counting the
// modules not yet finalized shows how many dead ones wait: the reclaiming collections keep that
// near MODULES_PER_COLLECTION, where V8 alone let thousands wait.
test("a session's dead block modules are reclaimed every few hundred blocks", async () => {
  const api = (globalThis as unknown as { WebAssembly: { Module: new (b: Uint8Array) => object } })
    .WebAssembly;
  const RealModule = api.Module;
  let live = 0;
  const registry = new FinalizationRegistry<number>(() => live--);
  // Counts modules as they are made; each is the real compiled module.
  api.Module = class extends RealModule {
    constructor(bytes: Uint8Array) {
      super(bytes);
      live++;
      registry.register(this, 0);
    }
  };
  try {
    const session = new VmSession();
    let peak = 0;
    for (let i = 0; i < 3000; i++) {
      const o = session.run(`{ ${neverSeenProgram(i + 50_000)} }`);
      assert.ok(o.ok && o.stdout.endsWith(` v${i + 50_000}\n`));
      // Finalization callbacks run between tasks.
      if (i % 25 === 24) await new Promise((r) => setImmediate(r));
      peak = Math.max(peak, live);
    }
    const bound = 2 * MODULES_PER_COLLECTION + 100;
    assert.ok(peak <= bound, `${peak} modules alive at once (bound ${bound})`);
  } finally {
    api.Module = RealModule;
  }
});
