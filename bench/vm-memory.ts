// Memory of a long-lived process that runs many never-seen C programs: resident memory (RSS),
// JS heap and external memory after the first 1,000 programs and after the full count, through
// runC (a fresh sandbox each) and through one VmSession (REPL semantics, as a chat or server
// session), with the full collections src/vm/reclaim.ts ran, and RSS sampled along the run.
// Run: node --expose-gc dist/bench/vm-memory.js [count]   (default 100,000)
import { loadavg } from "node:os";
import v8 from "node:v8";
import { VmSession, runC } from "../src/vm/index.js";
import { collections } from "../src/vm/reclaim.js";
import { neverSeenProgram } from "./vm-programs.js";

const COUNT = Math.max(2000, Number(process.argv[2] ?? 100_000));
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc)
  console.error(
    "vm-memory: run with node --expose-gc so that the heap is measured after a collection",
  );

const MB = 2 ** 20;

function snapshot(): { rss: number; heap: number; external: number; young: number } {
  gc?.();
  const m = process.memoryUsage();
  // V8's young generation grows (once) towards its maximum as a process keeps allocating;
  // reported so that this one-off is told apart from growth per program.
  const young = v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space");
  return {
    rss: m.rss / MB,
    heap: m.heapUsed / MB,
    external: m.external / MB,
    young: (young?.space_size ?? 0) / MB,
  };
}

/** Points along the run where RSS is sampled (after the first 1,000, then every tenth of the
 * count), to tell a one-off step from growth per program: the tail shows which it is. */
const SAMPLE_AT = new Set([1000, ...Array.from({ length: 10 }, (_, k) => ((k + 1) * COUNT) / 10)]);

function measure(label: string, run: (i: number) => void): void {
  let first = snapshot();
  let firstCollections = collections();
  const samples: string[] = [];
  const t0 = performance.now();
  for (let i = 0; i < COUNT; i++) {
    run(i);
    if (i === 999) {
      first = snapshot();
      firstCollections = collections();
    }
    if (SAMPLE_AT.has(i + 1)) {
      const s = i === 999 ? first : snapshot();
      samples.push(`${(i + 1).toLocaleString("en")} ${s.rss.toFixed(1)} (${s.young.toFixed(0)})`);
    }
  }
  const last = snapshot();
  const perRun = (key: keyof typeof last): string => {
    const bytes = ((last[key] - first[key]) * MB) / (COUNT - 1000);
    return `${bytes >= 0 ? "+" : ""}${bytes.toFixed(0)} B/program`;
  };
  const span = (key: keyof typeof last): string =>
    `${first[key].toFixed(1)} → ${last[key].toFixed(1)} MB (${perRun(key)})`;
  const runs = collections() - firstCollections;
  console.log(
    `${label}: after 1,000 → after ${COUNT.toLocaleString("en")}: RSS ${span("rss")}, ` +
      `JS heap ${span("heap")}, external ${span("external")}, ` +
      `young generation ${first.young.toFixed(0)} → ${last.young.toFixed(0)} MB; ` +
      `RSS target: within 10 MB (${(last.rss - first.rss).toFixed(1)} MB); ` +
      `${runs} reclaiming collections; ${((performance.now() - t0) / COUNT).toFixed(2)} ms/program`,
  );
  console.log(`  ${label}, RSS MB (young generation MB) after N programs: ${samples.join(", ")}`);
}

console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);
measure("runC", (i) => {
  const o = runC(neverSeenProgram(i));
  if (!o.ok) throw new Error(o.error.message);
});
const session = new VmSession();
measure("one VmSession", (i) => {
  const o = session.run(`{ ${neverSeenProgram(i + COUNT)} }`);
  if (!o.ok) throw new Error(o.error.message);
});
