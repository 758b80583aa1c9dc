// C VM speed: bench/programs/*.c run by the VM, gcc -O2 and tcc -run in one run, plus the compile
// latency of a 30-line block. Run: node dist/bench/c-vm.js [--markdown] [--compile-only];
// BENCH_RUNS=n sets rounds; --compile-only prints only the 30-line block's lines.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { packageRoot } from "../src/paths.js";
import { preprocess } from "../src/c/preprocess.js";
import { tokenize } from "../src/c/tokenize.js";
import { VmSession, runC, type VmOutcome } from "../src/vm/index.js";

const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 3));
const programsDir = join(packageRoot, "bench", "programs");
const work = mkdtempSync(join(tmpdir(), "ruffian-bench-c-"));
const EMPTY_PROGRAM = "int main() { return 0; }\n";

/** A typical block a model writes in one fenced region: a few helpers, loops, printf. */
const THIRTY_LINE_BLOCK = `#include <stdio.h>
int gcd(int a, int b) {
    while (b != 0) {
        int t = b;
        b = a % b;
        a = t;
    }
    return a;
}
int is_prime(int n) {
    if (n < 2) return 0;
    for (int d = 2; d * d <= n; d++)
        if (n % d == 0) return 0;
    return 1;
}
int main() {
    int primes = 0, g = 0;
    long sum = 0;
    for (int i = 1; i <= 100; i++) {
        if (is_prime(i)) {
            primes++;
            sum += i;
        }
        g += gcd(i, 36);
    }
    double mean = (double)sum / primes;
    printf("%d primes, sum %ld, mean %.2f\\n", primes, sum, mean);
    printf("gcd total %d\\n", g);
    return 0;
}
`;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

function toolAvailable(command: string, args: string[]): boolean {
  return spawnSync(command, args, { encoding: "utf8" }).status === 0;
}

interface Timed {
  wallMs: number;
  /** User + system CPU time of the child (and its children), from bash's `times`. */
  cpuMs: number;
  stdout: string;
}

function parseTimes(line: string): number {
  return line
    .trim()
    .split(/\s+/)
    .reduce((total, field) => {
      const m = /^(\d+)m([\d.]+)s$/.exec(field);
      return m ? total + (Number(m[1]) * 60 + Number(m[2])) * 1000 : total;
    }, 0);
}

/** Wall time (spawn to exit) and CPU time of one run of a child process: the command runs
 * `repeat` times in one shell (the output is the first run's) and the times are divided by
 * `repeat`, since bash reports CPU time in whole milliseconds. */
function timeProcess(command: string, args: string[], repeat = 1): Timed {
  const script =
    'n=$1; shift; "$@"; status=$?; for ((i = 1; i < n; i++)); do "$@" >/dev/null; done; ' +
    "times >&2; exit $status";
  const started = process.hrtime.bigint();
  const run = spawnSync("bash", ["-c", script, "bash", String(repeat), command, ...args], {
    encoding: "latin1",
    maxBuffer: 64 * 1024 * 1024,
  });
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6 / repeat;
  if (run.status !== 0) throw new Error(`${command} ${args.join(" ")} failed: ${run.stderr}`);
  const lines = run.stderr.trim().split("\n");
  return { wallMs, cpuMs: parseTimes(lines[lines.length - 1] ?? "") / repeat, stdout: run.stdout };
}

/** Runs per measurement: enough for about 100 ms of CPU, so that bash's millisecond
 * resolution stays under 1% of a native one, and load spreads evenly over the VM's. */
function repeatsFor(once: { cpuMs: number }): number {
  return Math.max(1, Math.min(BASELINE_REPEAT, Math.round(100 / Math.max(1, once.cpuMs))));
}

/** Runs of an empty program per baseline measurement (the most any program repeats). */
const BASELINE_REPEAT = 20;

function writeSource(name: string, source: string): string {
  const path = join(work, `${name}.c`);
  writeFileSync(path, source);
  return path;
}

function gccBinary(name: string, source: string): string {
  const bin = join(work, `${name}.gcc`);
  const compile = spawnSync("gcc", ["-O2", "-w", "-o", bin, writeSource(name, source), "-lm"], {
    encoding: "utf8",
  });
  if (compile.status !== 0) throw new Error(`gcc failed on ${name}: ${compile.stderr}`);
  return bin;
}

interface Cost {
  wallMs: number;
  cpuMs: number;
}

/** What starting an empty program costs, subtracted from every native measurement. */
function baseline(command: string, args: string[]): Cost {
  const runs = Array.from({ length: 7 + RUNS }, () =>
    timeProcess(command, args, BASELINE_REPEAT),
  ).slice(2);
  return { wallMs: median(runs.map((r) => r.wallMs)), cpuMs: median(runs.map((r) => r.cpuMs)) };
}

interface Row {
  name: string;
  compileMs: number;
  /** Wall: VmStats.runMs; CPU: VmStats.runCpuMs (the process's CPU while the program ran). */
  run: Cost;
  /** CPU of the whole runC call, every thread: compile, sandbox, collector and run. */
  runCCpuMs: number;
  /** Median VM run CPU time with -fwrapv (no overflow checks). */
  uncheckedCpuMs: number;
  gcc: Cost | undefined;
  tcc: Cost | undefined;
  note: string;
}

interface Peers {
  gcc: boolean;
  tcc: boolean;
  gccBaseline: Cost;
  tccBaseline: Cost;
}

function medianCost(costs: Cost[], base: Cost): Cost | undefined {
  if (costs.length === 0) return undefined;
  return {
    wallMs: Math.max(0, median(costs.map((c) => c.wallMs)) - base.wallMs),
    cpuMs: Math.max(0, median(costs.map((c) => c.cpuMs)) - base.cpuMs),
  };
}

/** One warm-up round, then RUNS rounds of VM, gcc and tcc back to back, so that load from other
 * processes on the machine falls on all three alike. */
function measure(name: string, source: string, peers: Peers): Row {
  const gccBin = peers.gcc ? gccBinary(name, source) : "";
  const tccSource = writeSource(name, source);
  const tccArgs = ["-run", tccSource, "-lm"];
  const vmCompile: number[] = [];
  const vmRun: Cost[] = [];
  const runCCpu: number[] = [];
  const wrapvRun: number[] = [];
  const gcc: Cost[] = [];
  const tcc: Cost[] = [];
  const notes: string[] = [];
  let gccRepeat = 1;
  let tccRepeat = 1;
  let vmRepeat = 1;
  for (let round = 0; round <= RUNS; round++) {
    // Like the native runs, the VM runs repeatedly, for about 100 ms of CPU, and the round's
    // values are means: a 5 ms run's single sample moves by tens of percent under load.
    const runs: VmOutcome[] = [];
    let runCCpuMs = 0;
    for (let k = 0; k < vmRepeat; k++) {
      const cpuBefore = process.cpuUsage();
      const outcome = runC(source, { profile: "huge" });
      const cpu = process.cpuUsage(cpuBefore);
      if (!outcome.ok) throw new Error(`${name}: ${outcome.error.kind}: ${outcome.error.message}`);
      runs.push(outcome);
      runCCpuMs += (cpu.user + cpu.system) / 1000 / vmRepeat;
    }
    const outcome = runs[0]!;
    // The same program with signed-overflow checks off (-fwrapv): the checks' cost.
    const unchecked: VmOutcome[] = [];
    for (let k = 0; k < vmRepeat; k++) {
      const outcome = runC(source, { profile: "huge", wrapv: true });
      if (!outcome.ok) throw new Error(`${name} (wrapv): ${outcome.error.message}`);
      unchecked.push(outcome);
    }
    const native = peers.gcc ? timeProcess(gccBin, [], gccRepeat) : undefined;
    const tccRun = peers.tcc ? timeProcess("tcc", tccArgs, tccRepeat) : undefined;
    if (round === 0) {
      if (native && native.stdout !== outcome.stdout) notes.push("VM output differs from gcc");
      if (tccRun && tccRun.stdout !== outcome.stdout) notes.push("VM output differs from tcc");
      if (native) gccRepeat = repeatsFor(native);
      if (tccRun) tccRepeat = repeatsFor(tccRun);
      vmRepeat = repeatsFor({ cpuMs: outcome.stats.runCpuMs ?? 0 });
      continue;
    }
    const mean = (of: VmOutcome[], value: (o: VmOutcome) => number): number =>
      of.reduce((sum, o) => sum + value(o), 0) / of.length;
    const cpuOf = (o: VmOutcome): number => o.stats.runCpuMs ?? NaN;
    vmCompile.push(mean(runs, (o) => o.stats.compileMs));
    vmRun.push({ wallMs: mean(runs, (o) => o.stats.runMs), cpuMs: mean(runs, cpuOf) });
    runCCpu.push(runCCpuMs);
    wrapvRun.push(mean(unchecked, cpuOf));
    if (native) gcc.push(native);
    if (tccRun) tcc.push(tccRun);
  }
  return {
    name,
    compileMs: median(vmCompile),
    run: medianCost(vmRun, { wallMs: 0, cpuMs: 0 })!,
    runCCpuMs: median(runCCpu),
    uncheckedCpuMs: median(wrapvRun),
    gcc: medianCost(gcc, peers.gccBaseline),
    tcc: medianCost(tcc, peers.tccBaseline),
    note: notes.join("; "),
  };
}

function fmt(ms: number | undefined): string {
  if (ms === undefined) return "-";
  return ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2);
}

function ratio(vm: number, peer: number | undefined): number | undefined {
  return peer === undefined || peer <= 0 ? undefined : vm / peer;
}

function fmtRatio(r: number | undefined): string {
  return r === undefined ? "-" : `${r.toFixed(2)}x`;
}

function geomean(values: (number | undefined)[]): string {
  const xs = values.filter((v): v is number => v !== undefined && v > 0);
  if (xs.length === 0) return "-";
  return fmtRatio(Math.exp(xs.reduce((s, v) => s + Math.log(v), 0) / xs.length));
}

/** `--markdown` prints the tables ready to paste into docs/benchmarks.md. */
const MARKDOWN = process.argv.includes("--markdown");

function pad(cells: string[], widths: number[]): string {
  const padded = cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)));
  return MARKDOWN ? `| ${padded.join(" | ")} |` : padded.join("  ");
}

/** The VM column beside the run: compile wall time, or the whole runC call's CPU time. */
interface SideColumn {
  label: string;
  value(r: Row): number;
}

function printTable(rows: Row[], kind: keyof Cost, side: SideColumn, title: string): void {
  const widths = [14, 11, 10, 10, 10, 8, 8];
  console.log(title);
  if (MARKDOWN) console.log("");
  console.log(
    pad(["program", side.label, "VM run", "gcc -O2", "tcc -run", "VM/gcc", "VM/tcc"], widths),
  );
  if (MARKDOWN)
    console.log(
      `| ${widths.map((w, i) => (i === 0 ? "-".repeat(w) : `${"-".repeat(w - 1)}:`)).join(" | ")} |`,
    );
  const gccRatios: (number | undefined)[] = [];
  const tccRatios: (number | undefined)[] = [];
  for (const r of rows) {
    const vm = r.run[kind];
    const g = ratio(vm, r.gcc?.[kind]);
    const t = ratio(vm, r.tcc?.[kind]);
    gccRatios.push(g);
    tccRatios.push(t);
    const cells = [r.name, fmt(side.value(r)), fmt(vm), fmt(r.gcc?.[kind]), fmt(r.tcc?.[kind])];
    console.log(
      pad([...cells, fmtRatio(g), fmtRatio(t)], widths) + (r.note ? `  (${r.note})` : ""),
    );
  }
  console.log(pad(["geomean", "", "", "", "", geomean(gccRatios), geomean(tccRatios)], widths));
  console.log("");
}

/** `--compile-only` skips the programs and prints only the compile-latency lines. */
const COMPILE_ONLY = process.argv.includes("--compile-only");

function main(): void {
  if (COMPILE_ONLY) {
    console.log(
      `C VM compile latency, ${new Date().toISOString().slice(0, 16)}Z, load average ` +
        `${loadavg()[0]!.toFixed(1)}, node ${process.version}`,
    );
    printCompileLatency();
    return;
  }
  const hasGcc = toolAvailable("gcc", ["--version"]);
  const hasTcc = toolAvailable("tcc", ["-v"]);
  const none: Cost = { wallMs: 0, cpuMs: 0 };
  const gccBaseline = hasGcc ? baseline(gccBinary("empty", EMPTY_PROGRAM), []) : none;
  const tccBaseline = hasTcc
    ? baseline("tcc", ["-run", writeSource("empty-tcc", EMPTY_PROGRAM)])
    : none;
  const peers: Peers = { gcc: hasGcc, tcc: hasTcc, gccBaseline, tccBaseline };
  const rows = readdirSync(programsDir)
    .filter((f) => f.endsWith(".c"))
    .sort()
    .map((file) =>
      measure(file.slice(0, -2), readFileSync(join(programsDir, file), "latin1"), peers),
    );

  console.log(
    `C VM benchmark, ${new Date().toISOString().slice(0, 16)}Z, ${cpus().length} cores ` +
      `(${cpus()[0]?.model ?? "?"}), load average ${loadavg()[0]!.toFixed(1)}, node ${process.version}`,
  );
  console.log(
    `median of ${RUNS} interleaved rounds (VM, gcc, tcc) after one warm-up; all times in ms. ` +
      `VM compile/run = VmStats.compileMs/runMs (profile huge). Native times are per run (a ` +
      `program runs repeatedly in one shell for about 100 ms of CPU), minus an empty ` +
      `program's (gcc ${fmt(gccBaseline.wallMs)} wall/${fmt(gccBaseline.cpuMs)} cpu, tcc -run ` +
      `${fmt(tccBaseline.wallMs)}/${fmt(tccBaseline.cpuMs)}); tcc -run includes tcc's own compile.` +
      (hasGcc ? "" : " gcc not found.") +
      (hasTcc ? "" : " tcc not found."),
  );
  console.log("");
  printTable(
    rows,
    "cpuMs",
    { label: "VM runC", value: (r) => r.runCCpuMs },
    "CPU time (user+sys, all threads; VM run = VmStats.runCpuMs, the process's CPU while the " +
      "program ran; VM runC = the whole runC call: compile, sandbox, collector and run):",
  );
  printTable(
    rows,
    "wallMs",
    { label: "VM compile", value: (r) => r.compileMs },
    "Wall-clock time:",
  );

  const checkRatios = rows.map((r) => r.run.cpuMs / Math.max(1e-9, r.uncheckedCpuMs));
  console.log("Signed-overflow checks: VM run CPU time with checks ÷ with -fwrapv (checks off):");
  console.log(
    rows.map((r, i) => `${r.name} ${fmtRatio(checkRatios[i])}`).join(", ") +
      `; geomean ${geomean(checkRatios)}`,
  );
  console.log("");
  printCompileLatency();
}

/** Blocks compiled before the compile-latency lines are measured: V8 optimizes the compiler
 * while it runs (on a loaded machine, slowly), and the median settled only after several
 * hundred blocks; a server compiling regions all day is past that. */
const WARM_UP_BLOCKS = 1000;

/** The 30-line block's compile: never-seen and repeated, then where a never-seen one's time goes. */
function printCompileLatency(): void {
  // A block the VM has never seen (its loop bound differs each time, so its module bytes do)
  // and the same block repeated (its compiled module comes from the cache).
  const variant = (k: number): string => THIRTY_LINE_BLOCK.replace("i <= 100", `i <= ${100 + k}`);
  // The warm-up's blocks have the same shape and a short run, and none is measured later.
  for (let k = 0; k < WARM_UP_BLOCKS; k++)
    runC(THIRTY_LINE_BLOCK.replace("gcd(i, 36)", `gcd(i, ${37 + k})`));
  for (const [label, source] of [
    ["never-seen", variant],
    ["repeated", (): string => THIRTY_LINE_BLOCK],
  ] as const) {
    const compileTimes: number[] = [];
    const wallTimes: number[] = [];
    for (let i = 0; i < 500; i++) {
      const started = performance.now();
      const outcome = runC(source(i));
      wallTimes.push(performance.now() - started);
      if (!outcome.ok) throw new Error(`30-line block failed: ${outcome.error.message}`);
      compileTimes.push(outcome.stats.compileMs);
    }
    console.log(
      `30-line block, ${label} (default profile), 500 runs after ${WARM_UP_BLOCKS} never-seen ` +
        `warm-up blocks: compile median ${fmt(median(compileTimes))} ms, p90 ` +
        `${fmt(percentile(compileTimes, 0.9))} ms; whole runC median ${fmt(median(wallTimes))} ms`,
    );
  }
  printCompilePhases(variant);
}

/** Times every `new WebAssembly.Module` and `new WebAssembly.Instance` while installed: the VM
 * looks both constructors up on the WebAssembly namespace at each use, so wrapping them there
 * measures V8's share of a compile without reaching into the VM. */
function timeWasmConstructors(): { moduleMs: number; instanceMs: number; restore(): void } {
  const wasm = (globalThis as unknown as { WebAssembly: Record<string, unknown> }).WebAssembly;
  type Ctor = new (...args: unknown[]) => object;
  const Module = wasm["Module"] as Ctor;
  const Instance = wasm["Instance"] as Ctor;
  const timing = {
    moduleMs: 0,
    instanceMs: 0,
    restore(): void {
      wasm["Module"] = Module;
      wasm["Instance"] = Instance;
    },
  };
  const timed = (Real: Ctor, field: "moduleMs" | "instanceMs"): Ctor =>
    function (...args: unknown[]): object {
      const started = performance.now();
      const made = new Real(...args);
      timing[field] += performance.now() - started;
      return made;
    } as unknown as Ctor;
  wasm["Module"] = timed(Module, "moduleMs");
  wasm["Instance"] = timed(Instance, "instanceMs");
  return timing;
}

/** Where a never-seen block's compile time goes: tokenize + preprocess, then parsing (what
 * VmSession.check does on top of them), then code generation and encoding, V8's
 * WebAssembly.Module, and its Instance (the rest of VmSession.run's compile). Medians of µs over
 * 500 blocks, each phase timed on its own block so that caches never serve one phase from
 * another's work. */
function printCompilePhases(variant: (k: number) => string): void {
  const phases = ["front", "parse", "codegen", "module", "instance", "whole"] as const;
  const samples = Object.fromEntries(phases.map((p) => [p, [] as number[]])) as Record<
    (typeof phases)[number],
    number[]
  >;
  const wasmTimes = timeWasmConstructors();
  try {
    for (let i = 0; i < 550; i++) {
      const session = new VmSession();
      let started = performance.now();
      preprocess(tokenize(variant(600 + 3 * i)));
      const frontMs = performance.now() - started;
      started = performance.now();
      const error = session.check(variant(601 + 3 * i));
      const checkMs = performance.now() - started;
      if (error) throw new Error(`30-line block failed: ${error.message}`);
      wasmTimes.moduleMs = 0;
      wasmTimes.instanceMs = 0;
      const outcome = session.run(variant(602 + 3 * i));
      if (!outcome.ok) throw new Error(`30-line block failed: ${outcome.error.message}`);
      if (i < 50) continue;
      const { compileMs } = outcome.stats;
      const wasmMs = wasmTimes.moduleMs + wasmTimes.instanceMs;
      samples.front.push(frontMs * 1000);
      samples.parse.push(Math.max(0, checkMs - frontMs) * 1000);
      samples.codegen.push(Math.max(0, compileMs - checkMs - wasmMs) * 1000);
      samples.module.push(wasmTimes.moduleMs * 1000);
      samples.instance.push(wasmTimes.instanceMs * 1000);
      samples.whole.push(compileMs * 1000);
    }
  } finally {
    wasmTimes.restore();
  }
  const m = (k: (typeof phases)[number]): string => median(samples[k]).toFixed(0);
  console.log(
    `never-seen compile phases (medians, µs): tokenize+preprocess ${m("front")}, parse ` +
      `${m("parse")}, codegen+encode ${m("codegen")}, WebAssembly.Module ${m("module")}, ` +
      `Instance ${m("instance")} (whole ${m("whole")})`,
  );
}

try {
  main();
} finally {
  rmSync(work, { recursive: true, force: true });
}
