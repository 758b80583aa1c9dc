// The compile tiers leave the process as they found it: a block predicted to run long is
// compiled by TurboFan with V8's flags switched for that one module, and afterwards V8 tiers
// other code up as it did before (dynamically, when a function turns out hot), instead of
// compiling every later block's functions a second time on its worker threads.
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import assert from "node:assert/strict";

test("a long-running block leaves V8's dynamic tier-up on for the blocks after it", () => {
  // V8's own test natives tell whether a wasm function runs TurboFan code; they need
  // --allow-natives-syntax, so this runs in a child process. The control switches eager
  // tier-up on by hand and shows that the wait is long enough to see a tier-up happen.
  const runC = new URL("../../src/vm/run-c.js", import.meta.url).href;
  const script = `
    import v8 from "node:v8";
    import { setTimeout as sleep } from "node:timers/promises";
    const { runC } = await import(${JSON.stringify(runC)});
    // (func (export "f") (param i32) (result i32) local.get 0 i32.const k i32.add)
    const bytes = (k) => new Uint8Array([0,97,115,109,1,0,0,0,1,6,1,96,1,127,1,127,3,2,1,0,
      7,5,1,1,102,0,0,10,9,1,7,0,32,0,65,k,106,11]);
    let k = 1;
    async function tiersUp() {
      const f = new WebAssembly.Instance(new WebAssembly.Module(bytes(k++))).exports.f;
      f(1);
      for (let i = 0; i < 200; i++) {
        if (%IsTurboFanFunction(f)) return true;
        await sleep(10);
      }
      return false;
    }
    const seen = { before: await tiersUp() };
    v8.setFlagsFromString("--no-wasm-dynamic-tiering");
    seen.eager = await tiersUp();
    v8.setFlagsFromString("--wasm-dynamic-tiering");
    const long = runC("long s = 0; for (long i = 0; i < 100000000; i++) s += i & 3; s", { profile: "huge" });
    if (!long.ok || long.value.value !== 150000000n) throw new Error("the long block failed");
    seen.after = await tiersUp();
    console.log(JSON.stringify(seen));`;
  const r = spawnSync(
    process.execPath,
    ["--allow-natives-syntax", "--input-type=module", "-e", script],
    { encoding: "utf8" },
  );
  assert.equal(r.status, 0, r.stderr);
  const seen = JSON.parse(r.stdout) as { before: boolean; eager: boolean; after: boolean };
  assert.deepEqual(seen, { before: false, eager: true, after: false });
});
