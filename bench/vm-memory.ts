// Memory of a long-lived process that runs many never-seen C programs: resident memory (RSS),
// JS heap and external memory after the first 1,000 programs and after the full count, through
// runC (a fresh sandbox each) and through one VmSession (REPL semantics, as a chat or server
// session), with the full collections src/vm/reclaim.ts ran, and RSS sampled along the run.
// Run: node --expose-gc dist/bench/vm-memory.js [count] [runC|session]
//   count: programs per path (default 100,000); a path name measures that path alone, in this
//   process (by default both run, runC first, as a server runs both in one process).
import { existsSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import v8 from "node:v8";
import { VmSession, runC } from "../src/vm/index.js";
import { collections } from "../src/vm/reclaim.js";
import { neverSeenProgram } from "./vm-programs.js";

const PATHS = ["runC", "session"] as const;
const COUNT = Math.max(2000, Number(process.argv[2] ?? 100_000));
const only = process.argv[3];
if (only !== undefined && !(PATHS as readonly string[]).includes(only)) {
  console.error(`vm-memory: unknown path '${only}' (expected ${PATHS.join(" or ")})`);
  process.exit(2);
}
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc)
  console.error(
    "vm-memory: run with node --expose-gc so that the heap is measured after a collection",
  );

const MB = 2 ** 20;

/** 12345 → "12,345". Not toLocaleString: its first call loads ICU's locale data, about 9 MB
 * of resident pages, and when that came after the first sample it showed as growth. */
const grouped = (n: number): string => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");

const ROLLUP = "/proc/self/smaps_rollup";

/** Anonymous resident memory (heaps, V8's spaces, wasm memories touched), apart from the pages
 * of the node binary and libraries that RSS also counts: those grow when a code path runs for
 * the first time, not per program. NaN where the kernel has no smaps_rollup. */
function anonymousMb(): number {
  if (!existsSync(ROLLUP)) return NaN;
  const kb = /^Anonymous:\s+(\d+) kB/m.exec(readFileSync(ROLLUP, "utf8"))?.[1];
  return kb === undefined ? NaN : Number(kb) / 1024;
}

interface Snapshot {
  rss: number;
  anon: number;
  heap: number;
  external: number;
  young: number;
  youngResident: number;
}

function snapshot(): Snapshot {
  gc?.();
  const m = process.memoryUsage();
  // V8's young generation grows (once) towards its maximum as a process keeps allocating;
  // reported so that this one-off is told apart from growth per program. Its resident part is
  // what costs RSS: how far allocation runs between two scavenges.
  const young = v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space");
  return {
    rss: m.rss / MB,
    anon: anonymousMb(),
    heap: m.heapUsed / MB,
    external: m.external / MB,
    young: (young?.space_size ?? 0) / MB,
    youngResident: (young?.physical_space_size ?? 0) / MB,
  };
}

/** Points along the run where RSS is sampled (after the first 1,000, then every tenth of the
 * count), to tell a one-off step from growth per program: the tail shows which it is. */
const SAMPLE_AT = new Set([1000, ...Array.from({ length: 10 }, (_, k) => ((k + 1) * COUNT) / 10)]);

const sampleText = (n: number, s: Snapshot): string =>
  `${grouped(n)} ${s.rss.toFixed(1)} (${s.anon.toFixed(1)}; ${s.young.toFixed(0)}/${s.youngResident.toFixed(1)})`;

function measure(label: string, run: (i: number) => void): void {
  let first = snapshot();
  // Everything the report itself calls runs once before the first sample, so that none of it
  // lands between two samples.
  sampleText(0, first);
  let firstCollections = collections();
  const samples: string[] = [];
  const t0 = performance.now();
  for (let i = 0; i < COUNT; i++) {
    run(i);
    if (i === 999) {
      first = snapshot();
      firstCollections = collections();
    }
    if (SAMPLE_AT.has(i + 1)) samples.push(sampleText(i + 1, i === 999 ? first : snapshot()));
  }
  const last = snapshot();
  const perRun = (key: keyof Snapshot): string => {
    const bytes = ((last[key] - first[key]) * MB) / (COUNT - 1000);
    return `${bytes >= 0 ? "+" : ""}${bytes.toFixed(0)} B/program`;
  };
  const span = (key: keyof Snapshot): string =>
    `${first[key].toFixed(1)} → ${last[key].toFixed(1)} MB (${perRun(key)})`;
  const runs = collections() - firstCollections;
  console.log(
    `${label}: after 1,000 → after ${grouped(COUNT)}: RSS ${span("rss")}, ` +
      `anonymous ${span("anon")}, JS heap ${span("heap")}, external ${span("external")}, ` +
      `young generation ${first.young.toFixed(0)} → ${last.young.toFixed(0)} MB ` +
      `(resident ${first.youngResident.toFixed(1)} → ${last.youngResident.toFixed(1)}); ` +
      `RSS target: within 10 MB (${(last.rss - first.rss).toFixed(1)} MB); ` +
      `${runs} reclaiming collections; ${((performance.now() - t0) / COUNT).toFixed(2)} ms/program`,
  );
  console.log(
    `  ${label}, after N programs: RSS MB (anonymous MB; young generation MB/resident MB): ` +
      samples.join(", "),
  );
}

console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);
if (only !== "session")
  measure("runC", (i) => {
    const o = runC(neverSeenProgram(i));
    if (!o.ok) throw new Error(o.error.message);
  });
if (only !== "runC") {
  const session = new VmSession();
  measure("one VmSession", (i) => {
    const o = session.run(`{ ${neverSeenProgram(i + COUNT)} }`);
    if (!o.ok) throw new Error(o.error.message);
  });
}
