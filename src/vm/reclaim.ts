// Reclaiming the native memory of dead block modules. Every never-seen block is a new wasm
// module, and V8 allocates its decoded metadata and code outside the JS heap (about 6 KB of
// zone memory per module for the type section alone). V8 places wasm module and instance
// objects in old space and does not count that native memory as heap or external pressure, so
// nothing prompts a full collection: with a JS heap of a few MB, one session ran 1,500–3,000
// blocks between full collections, malloc's heap grew by tens of MB to hold the dead modules,
// and fragmentation kept most of it resident afterwards (issue 14: RSS 125 → 150 MB over 6,000
// blocks). A full collection every MODULES_PER_COLLECTION compilations frees them while they
// are few. A collection's cost grows with the live JS heap, so a process with a larger heap (a
// server holding a model's state) collects proportionally less often.
//
// It also holds V8's young generation at its size when the first block compiles (see
// holdYoungGeneration).
import v8 from "node:v8";
import { runInNewContext } from "node:vm";

/** Never-seen modules compiled between two full collections. */
export const MODULES_PER_COLLECTION = 256;

/** Live JS heap per module compiled between collections, above the minimum interval: with
 * 7 MB live (a session's usual heap) that is 224, under MODULES_PER_COLLECTION; with 100 MB live,
 * 3,200. */
const HEAP_BYTES_PER_MODULE = 32 * 1024;

let collect: (() => void) | null | undefined;
let compiledSince = 0;
let interval = MODULES_PER_COLLECTION;
let runs = 0;

/** Full collections run so far to reclaim modules (benchmarks report it). */
export function collections(): number {
  return runs;
}

/** The engine's full collection: `gc` when node runs with --expose-gc, else a context created
 * after setting that flag (null when the flags are frozen). Contexts created later also get
 * `gc`; nothing in them can reach the sandbox. */
function collector(): (() => void) | null {
  if (collect !== undefined) return collect;
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (typeof exposed === "function") return (collect = exposed);
  try {
    v8.setFlagsFromString("--expose-gc");
    const fn = runInNewContext("gc") as unknown;
    collect = typeof fn === "function" ? (fn as () => void) : null;
  } catch {
    collect = null;
  }
  return collect;
}

let youngHeld = false;

/**
 * Stops V8's young generation from growing any further (Node 20's V8 doubles it, up to two
 * 16 MB semi-spaces, once the bytes that survived collections since it last grew exceed its
 * size; nothing decays that count). Each block's wasm instance lives in old space and keeps its
 * young objects (exports, globals, function wrappers, memory objects) alive through every
 * scavenge until a full collection finds the instance dead, so every block adds kilobytes to
 * that count and any process that keeps running blocks reaches the maximum within a few
 * thousand: one session alone went from 16 to 32 MB between its blocks 1,000 and 10,000, its
 * resident young memory from 14.5 to 31.3 MB, most of its +24 MB of RSS over 100,000 blocks.
 * Scavenges then come more often, on a smaller space; compile and run times did not change
 * beyond the noise of a loaded machine (docs/benchmarks.md, VM memory). Where flags cannot be
 * set, V8's default growth holds.
 */
function holdYoungGeneration(): void {
  youngHeld = true;
  try {
    v8.setFlagsFromString("--semi-space-growth-factor=1");
  } catch {
    /* flags frozen */
  }
}

/** Called once per newly compiled module (not for cache hits). */
export function noteModuleCompiled(): void {
  if (!youngHeld) holdYoungGeneration();
  if (++compiledSince < interval) return;
  compiledSince = 0;
  const gc = collector();
  if (!gc) return;
  gc();
  runs++;
  const live = v8.getHeapStatistics().used_heap_size;
  interval = Math.max(MODULES_PER_COLLECTION, Math.ceil(live / HEAP_BYTES_PER_MODULE));
}
