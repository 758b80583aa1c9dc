// A guard on memory in long-lived processes: over thousands of never-seen programs through runC
// and through one VmSession, the JS heap of retained objects (after a full collection) grows by
// under 400 bytes per program and external memory by under 200 in the median of several
// windows (a cache or a scope growing per program would retain kilobytes in every window), and
// the native memory of dead block modules is reclaimed every few hundred blocks. bench/vm-memory.ts measures resident memory over 100,000 programs,
// which is where the 10 MB target is judged.
import { spawnSync } from "node:child_process";
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

// Every runC sandbox starts from zeroed memory: what one program wrote, on its heap, its stack or
// anywhere else in its memory, is gone for the next (a guard for reusing sandbox memories, which
// was tried: docs/benchmarks.md, VM memory).
test("a runC sandbox never sees what an earlier one left in memory", () => {
  const write = runC(
    "long *heap = (long *)malloc(64); heap[0] = 41; long stack[4]; stack[2] = 42;\n" +
      "long *low = (long *)4096; *low = 43; long *deep = (long *)(512 * 1024); *deep = 44;\n" +
      "return heap[0] + stack[2] + *low + *deep;",
  );
  assert.ok(write.ok && write.text === String(41 + 42 + 43 + 44));
  const read = runC(
    "long *heap = (long *)malloc(64); long stack[4];\n" +
      'printf("%ld %ld %ld %ld", heap[0], stack[2], *(long *)4096, *(long *)(512 * 1024));',
  );
  assert.ok(read.ok, read.ok ? "" : read.error.message);
  assert.equal(read.stdout, "0 0 0 0");
});

/** The function signatures a module's type section declares, as "params>results". */
function declaredSignatures(bytes: Uint8Array): string[] {
  let p = 8;
  const u32 = (): number => {
    let r = 0;
    for (let shift = 0; ; shift += 7) {
      const b = bytes[p++]!;
      r |= (b & 127) << shift;
      if (b < 128) return r >>> 0;
    }
  };
  const names: Record<number, string> = { 0x7f: "i32", 0x7e: "i64", 0x7d: "f32", 0x7c: "f64" };
  while (p < bytes.length) {
    const id = bytes[p++]!;
    const size = u32();
    if (id !== 1) {
      p += size;
      continue;
    }
    const sigs: string[] = [];
    for (let n = u32(); n > 0; n--) {
      p++; // 0x60, a function type
      const params = Array.from({ length: u32() }, () => names[bytes[p++]!]).join(",");
      const results = Array.from({ length: u32() }, () => names[bytes[p++]!]).join(",");
      sigs.push(`${params}>${results}`);
    }
    return sigs;
  }
  return [];
}

/** The bytes of every wasm module compiled while `run` runs. */
function compiledModules(run: () => void): Uint8Array[] {
  const api = (globalThis as unknown as { WebAssembly: { Module: new (b: Uint8Array) => object } })
    .WebAssembly;
  const RealModule = api.Module;
  const compiled: Uint8Array[] = [];
  api.Module = class extends RealModule {
    constructor(bytes: Uint8Array) {
      super(bytes);
      compiled.push(bytes);
    }
  };
  try {
    run();
  } finally {
    api.Module = RealModule;
  }
  return compiled;
}

// Node 20's V8 keeps a copy of every signature that every compiled module declares, for the
// life of the process (24-40 bytes each; later V8s free the duplicates): with a never-seen block
// every millisecond, each signature a block declares costs about 3 MB per 100,000 blocks. So a
// block declares only the signatures of the functions it defines: its traps (division by zero,
// overflow, assert, call depth, shadow stack) are `unreachable` instructions, a big counted loop
// charges through refuel, and every host library call shares refuel's `>` (its arguments and
// result pass through memory), where each was a signature of its own.
test("a block declares only the signatures of the functions it defines", () => {
  let o: ReturnType<VmSession["run"]> | undefined;
  const compiled = compiledModules(() => {
    o = new VmSession().run(
      "{ long s = 0; int d = 7;\n" +
        "for (long k = 0; k < 4000000000L / 1000000; k++) s += k * 3 / d;\n" +
        "int q = 0; while (q < 100) q += d; assert(s > 0);\n" +
        'char b[16]; snprintf(b, sizeof b, "%d", q % d); puts(b);\n' +
        'printf("%ld %d %.3f\\n", s, rand() >= 0, pow(2.0, 0.5)); }',
    );
  });
  assert.ok(o?.ok, o && !o.ok ? o.error.message : "");
  let s = 0n;
  for (let k = 0n; k < 4000n; k++) s += (k * 3n) / 7n;
  assert.equal(o.stdout, `${105 % 7}\n${s} 1 ${Math.SQRT2.toFixed(3)}\n`);
  assert.deepEqual(declaredSignatures(compiled.at(-1)!), [">"]);
});

// A block's value would make its entry's signature differ with the value's type: the entry
// leaves the value in memory instead, so a block that returns one declares the same signatures
// as one that does not.
test("a block returns its value without declaring a signature for it", () => {
  const cases: [string, string, unknown][] = [
    ["123456789012L * 3", "long", 370370367036n],
    ["-7", "int", -7],
    ["4000000000U", "unsigned int", 4000000000],
    ["1.5 * 3", "double", 4.5],
    ["(float)1.25", "float", 1.25],
    ["(_Bool)5", "_Bool", true],
    ['"abc"', "char *", "abc"],
    ["int k = 6; for (int i = 0; i < 3; i++) k += i; return k * 7;", "int", 63],
  ];
  for (const [source, ctype, value] of cases) {
    let o: ReturnType<typeof runC> | undefined;
    const compiled = compiledModules(() => (o = runC(source)));
    assert.ok(o?.ok, o && !o.ok ? o.error.message : "");
    assert.deepEqual(o.value, { ctype, value }, source);
    assert.deepEqual(declaredSignatures(compiled.at(-1)!), [">"], source);
  }
});

// String literals have static storage, so a session keeps every block's literals for good; a
// literal identical to an earlier block's shares its storage (C allows it), so that the same
// format string in every block does not take VM memory per block.
test("a session's blocks share identical string literals", () => {
  const session = new VmSession();
  const used: number[] = [];
  for (let i = 0; i < 50; i++) {
    const o = session.run(`{ printf("%d %s\\n", ${i}, "same"); }`);
    assert.ok(o.ok && o.stdout === `${i} same\n`);
    used.push(o.stats.memoryBytes);
  }
  assert.equal(used.at(-1), used[0], `VM memory in use grew: ${used[0]} → ${used.at(-1)} bytes`);
  const o = session.run('char *a = "same"; char *b = "other";\nreturn a[0] + b[0];');
  assert.ok(o.ok && o.text === String("s".charCodeAt(0) + "o".charCodeAt(0)));
  assert.ok(o.stats.memoryBytes > used[0]!, "a new literal takes storage");
});

// V8 grows its young generation for good once enough bytes survived its collections, and every
// block's instance keeps young objects alive until a full collection: a process running blocks
// went from 16 to 32 MB of young generation (+17 MB resident) within its first 10,000 blocks.
// The VM holds it at its size when the first block compiles (src/vm/reclaim.ts). Measured in a
// fresh process: in this one, earlier tests' blocks already moved it.
test("the young generation stays at its size when the first block compiled", () => {
  const vm = new URL("../../src/vm/index.js", import.meta.url).href;
  const programs = new URL("../../bench/vm-programs.js", import.meta.url).href;
  const script = `
    import v8 from "node:v8";
    const { VmSession } = await import(${JSON.stringify(vm)});
    const { neverSeenProgram } = await import(${JSON.stringify(programs)});
    const young = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space").space_size;
    const session = new VmSession();
    const sizes = [];
    for (let i = 0; i < 2500; i++) {
      const o = session.run("{ " + neverSeenProgram(i) + " }");
      if (!o.ok || !o.stdout.endsWith(" v" + i + "\\n")) throw new Error("block " + i + " failed");
      if (i === 0 || i % 500 === 499) sizes.push(young());
    }
    console.log(JSON.stringify(sizes));`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    encoding: "utf8",
  });
  assert.equal(r.status, 0, r.stderr);
  const sizes = JSON.parse(r.stdout) as number[];
  assert.equal(sizes.length, 6);
  assert.ok(
    sizes.every((s) => s === sizes[0]),
    `young generation (bytes) after blocks 1, 500, …, 2,500: ${sizes.join(", ")}`,
  );
});

// A block's top-level literals that only go straight into printf or puts are read during that
// call and never again, so they share one region that each block overwrites (src/vm/
// run-literals.ts) instead of 16 bytes of VM memory each for good: over 100,000 never-seen blocks
// those held 1.6 MB. Every other literal keeps static storage.
test("a session keeps no memory for literals its blocks only pass to printf or puts", () => {
  const session = new VmSession();
  const inUse: number[] = [];
  for (let i = 0; i < 600; i++) {
    const o = session.run(`{ printf("%d %s\\n", ${i}, "v${i}"); puts("w${i}"); }`);
    assert.ok(o.ok && o.stdout === `${i} v${i}\nw${i}\n`, JSON.stringify(o));
    if (i % 100 === 99) inUse.push(o.stats.memoryBytes);
  }
  assert.ok(
    inUse.every((b) => b === inUse[0]),
    `VM memory in use (bytes) after blocks 100, 200, …, 600: ${inUse.join(", ")}`,
  );
  // Literals that outlive their block's run keep their bytes: one stored in a global, one in a
  // function the block defines, and every literal of a block that redefines puts.
  const kept = (source: string): string => {
    const o = session.run(source);
    assert.ok(o.ok, JSON.stringify(o));
    return o.stdout;
  };
  kept(`char *saved; saved = "kept"; printf("%s\\n", "run only");`);
  kept(`void greet(void) { printf("%s\\n", "from greet"); }`);
  assert.equal(kept(`printf("%s %s\\n", saved, "next");`), "kept next\n");
  assert.equal(kept(`greet();`), "from greet\n");
  kept(`char *last; int puts(const char *s) { last = (char *)s; return 0; } puts("mine");`);
  assert.equal(kept(`printf("%s|%s\\n", last, "other");`), "mine|other\n");
  assert.equal(kept(`greet(); printf("%s\\n", saved);`), "from greet\nkept\n");
});
