// A guard on memory in long-lived processes: over thousands of never-seen programs through runC
// and through one VmSession, the JS heap of retained objects (after a full collection) grows by
// under 400 bytes per program and external memory by under 200 in the median of several
// windows (a cache or a scope growing per program would retain kilobytes in every window), and
// the native memory of dead block modules is reclaimed every few hundred blocks. bench/vm-memory.ts measures resident memory over 100,000 programs,
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

const WARM_UP = 300;
const WINDOWS = 5;
const WINDOW = 1000;

/** Retained bytes per program of JS heap and of external memory (array buffers, wasm memories):
 * the median over WINDOWS consecutive windows of WINDOW programs, each measured after a full
 * collection. Something kept per program grows the heap in every window, so the median shows
 * it; a one-off (a function optimized late, a cache filling up, a collection's timing under
 * load) lands in one window and does not move the median. */
function retainedGrowth(run: (i: number) => void): {
  heap: number;
  external: number;
  windows: string;
} {
  let i = 0;
  for (; i < WARM_UP; i++) run(i);
  let before = afterGc();
  const heap: number[] = [];
  const external: number[] = [];
  for (let w = 0; w < WINDOWS; w++) {
    for (const end = i + WINDOW; i < end; i++) run(i);
    const after = afterGc();
    heap.push((after.heap - before.heap) / WINDOW);
    external.push((after.external - before.external) / WINDOW);
    before = after;
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
  const windows = heap.map((h, w) => `${h.toFixed(0)}/${external[w]!.toFixed(0)}`).join(", ");
  return { heap: median(heap), external: median(external), windows };
}

function assertBounded(growth: { heap: number; external: number; windows: string }): void {
  const detail = `(per window, heap/external bytes per program: ${growth.windows})`;
  assert.ok(
    growth.heap < 400,
    `JS heap grew ${growth.heap.toFixed(0)} bytes per program ${detail}`,
  );
  assert.ok(
    growth.external < 200,
    `external memory grew ${growth.external.toFixed(0)} bytes per program ${detail}`,
  );
}

test("runC retains under 400 bytes of JS heap and 200 of external memory per program", () => {
  const growth = retainedGrowth((i) => {
    const o = runC(neverSeenProgram(i));
    assert.ok(o.ok && o.stdout.endsWith(` v${i}\n`));
  });
  assertBounded(growth);
});

test("one long-lived session retains under 400 bytes of JS heap and 200 of external memory per block", () => {
  const session = new VmSession();
  const growth = retainedGrowth((i) => {
    const o = session.run(`{ ${neverSeenProgram(i)} }`);
    assert.ok(o.ok && o.stdout.endsWith(` v${i}\n`));
  });
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
