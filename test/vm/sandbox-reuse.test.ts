// runC reuses a finished sandbox's wasm memory for the next one (a fresh WebAssembly.Memory per
// block started a full collection every few dozen blocks), and a memory that grew is not reused.
// That a reused memory is zeroed is tested in memory.test.ts.
import { test } from "node:test";
import assert from "node:assert/strict";
import { runC } from "../../src/vm/index.js";

/** Counts `new WebAssembly.Memory` calls while `body` runs (the VM looks the constructor up on
 * the namespace at each use, so replacing it there sees every one). */
function countMemories(body: () => void): number {
  const wasm = (globalThis as unknown as { WebAssembly: Record<string, unknown> }).WebAssembly;
  const Real = wasm["Memory"] as new (d: unknown) => object;
  let made = 0;
  wasm["Memory"] = function (d: unknown): object {
    made++;
    return new Real(d);
  };
  try {
    body();
  } finally {
    wasm["Memory"] = Real;
  }
  return made;
}

test("runC reuses one wasm memory for block after block", () => {
  runC("int main(void) { return 0; }");
  const made = countMemories(() => {
    for (let i = 0; i < 50; i++) {
      const outcome = runC(`int main(void) { return ${i}; }`);
      assert.ok(outcome.ok);
    }
  });
  assert.ok(made <= 1, `50 blocks created ${made} memories`);
});

test("a memory that grew is not reused: the next block gets one of the initial size", () => {
  const grown = runC(`
#include <stdlib.h>
int main(void) { char *p = malloc(8 << 20); p[(8 << 20) - 1] = 1; return p[(8 << 20) - 1]; }`);
  assert.ok(grown.ok, grown.ok ? "" : grown.error.message);
  const made = countMemories(() => {
    // The grown block took the spare and kept it: were grown memories reused, none is made.
    const next = runC("int main(void) { return 0; }");
    assert.ok(next.ok);
  });
  assert.equal(made, 1);
});
