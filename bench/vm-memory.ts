// Memory of a long-lived process that runs many never-seen C programs: resident memory (RSS)
// and JS heap after the first 1,000 programs and after the full count, through runC (a fresh
// sandbox each) and through one VmSession (REPL semantics, as a chat or server session).
// Run: node --expose-gc dist/bench/vm-memory.js [count]   (default 100,000)
import { loadavg } from "node:os";
import { VmSession, runC } from "../src/vm/index.js";
import { neverSeenProgram } from "./vm-programs.js";

const COUNT = Math.max(2000, Number(process.argv[2] ?? 100_000));
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc)
  console.error(
    "vm-memory: run with node --expose-gc so that the heap is measured after a collection",
  );

function snapshot(): { rss: number; heap: number } {
  gc?.();
  const m = process.memoryUsage();
  return { rss: m.rss / 2 ** 20, heap: m.heapUsed / 2 ** 20 };
}

function measure(label: string, run: (i: number) => void): void {
  let first = snapshot();
  const t0 = performance.now();
  for (let i = 0; i < COUNT; i++) {
    run(i);
    if (i === 999) first = snapshot();
  }
  const last = snapshot();
  const perRun = ((last.rss - first.rss) * 2 ** 20) / (COUNT - 1000);
  console.log(
    `${label}: RSS ${first.rss.toFixed(1)} MB after 1,000 → ${last.rss.toFixed(1)} MB after ${COUNT.toLocaleString("en")} ` +
      `(${perRun >= 0 ? "+" : ""}${perRun.toFixed(0)} bytes/program; target: within 10 MB), ` +
      `JS heap ${first.heap.toFixed(1)} → ${last.heap.toFixed(1)} MB, ${((performance.now() - t0) / COUNT).toFixed(2)} ms/program`,
  );
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
