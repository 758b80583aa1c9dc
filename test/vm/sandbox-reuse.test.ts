// runC reuses a finished sandbox's wasm memory for the next one (a fresh WebAssembly.Memory per
// block started a full collection every few dozen blocks): what one block leaves anywhere in
// its memory must never be visible to the next, and a memory that grew is not reused.
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

// Writes a pattern over the bottom of the shadow stack (far below any frame), a frame, globals,
// the heap and past the allocator's top (all inside the memory's initial size).
const SCRIBBLE = `
#include <stdlib.h>
int g[64];
int main(void) {
  char *low = (char *)2048;
  for (int i = 0; i < 100; i++) low[i] = 0x5a;
  char local[4096];
  for (int i = 0; i < 4096; i++) local[i] = 0x5a;
  for (int i = 0; i < 64; i++) g[i] = 0x5a5a;
  char *heap = malloc(1000);
  for (int i = 0; i < 20000; i++) heap[i] = 0x5a;
  printf("%d", local[100] + g[3] + heap[19999]);
  return 0;
}`;

// Sums the same places without writing them first.
const READ_BACK = `
#include <stdlib.h>
int g[64];
int main(void) {
  char *low = (char *)2048;
  long sum = 0;
  for (int i = 0; i < 100; i++) sum += low[i];
  char local[4096];
  char *p = local;
  for (int i = 0; i < 4096; i++) sum += p[i];
  for (int i = 0; i < 64; i++) sum += g[i];
  char *heap = malloc(1000);
  for (int i = 0; i < 20000; i++) sum += heap[i];
  printf("%ld", sum);
  return 0;
}`;

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

test("a block reads zeros where the previous block scribbled", () => {
  const scribbled = runC(SCRIBBLE);
  assert.ok(scribbled.ok, scribbled.ok ? "" : scribbled.error.message);
  assert.equal(scribbled.stdout, String(0x5a + 0x5a5a + 0x5a));
  const read = runC(READ_BACK);
  assert.ok(read.ok, read.ok ? "" : read.error.message);
  assert.equal(read.stdout, "0");
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
