// A guard on memory in long-lived processes: after thousands of never-seen programs through runC
// and through one VmSession, the JS heap of retained objects (after a full collection) grows by
// under 400 bytes per program (measured: about 300, inside V8, still to be found; a cache or a
// scope growing per program would retain kilobytes). bench/vm-memory.ts measures resident memory
// over 100,000 programs, which is where the 10 MB target is judged.
import { test } from "node:test";
import assert from "node:assert/strict";
import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import { VmSession, runC } from "../../src/vm/index.js";
import { neverSeenProgram } from "../../bench/vm-programs.js";

v8.setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
const heapAfterGc = (): number => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

function retainedGrowth(run: (i: number) => void, count: number): number {
  for (let i = 0; i < 300; i++) run(i);
  const before = heapAfterGc();
  for (let i = 300; i < count; i++) run(i);
  return heapAfterGc() - before;
}

test("runC retains under 400 bytes of JS heap per program", () => {
  const growth = retainedGrowth((i) => {
    const o = runC(neverSeenProgram(i));
    assert.ok(o.ok && o.stdout.endsWith(` v${i}\n`));
  }, 3000);
  assert.ok(growth < 400 * 2700, `heap grew ${growth} bytes`);
});

test("one long-lived session retains under 400 bytes of JS heap per block", () => {
  const session = new VmSession();
  const growth = retainedGrowth((i) => {
    const o = session.run(`{ ${neverSeenProgram(i)} }`);
    assert.ok(o.ok && o.stdout.endsWith(` v${i}\n`));
  }, 3000);
  assert.ok(growth < 400 * 2700, `heap grew ${growth} bytes`);
});
