// Cost per step of every sampling mode and every distribution read at 512, 32,000 and 151,936
// tokens, with ratios against peers measured in the same run: the naive implementation (copy,
// full sort, Math.exp over everything), llama.cpp's own sampler chain (llama_sampler_* through
// koffi), and the memory floor (one copy of the logits). The distribution reads that compute
// exponentials run on each kernel path there is: the project's own native kernels (src/native/,
// where built), llama.cpp's exp kernel (bound once the engine's library is loaded, as in the
// decode loop) and the WebAssembly kernels alone (the last fallback).
// `npm run bench:sampler`, or `node dist/bench/sampler.js 151936` for one vocabulary size
import { loadavg } from "node:os";
import { Rng, Sampler, type SamplerOptions } from "../src/decode/sampler.js";
import { LogitState } from "../src/decode/logit-state.js";
import { llamaChain } from "./llama-sampler.js";
import { loadLlamaLibrary } from "../src/engine/llama/library.js";
import {
  ggmlCpuKernels,
  ggmlCpuKernelsStatus,
  setGgmlCpuKernelsEnabled,
} from "../src/engine/llama/ggml-cpu-kernels.js";
import {
  nativeKernels,
  nativeKernelsStatus,
  setNativeKernelsEnabled,
} from "../src/native/native-kernels.js";

/** The budget per step at 151,936 tokens. */
const BUDGET_MS = 0.15;

interface Mode {
  name: string;
  options: SamplerOptions;
}

const MODES: Mode[] = [
  { name: "greedy", options: { temperature: 0 } },
  { name: "temperature 0.8", options: { temperature: 0.8 } },
  { name: "top-k 40", options: { temperature: 0.8, topK: 40 } },
  { name: "top-p 0.9", options: { temperature: 0.8, topP: 0.9 } },
  { name: "min-p 0.05", options: { temperature: 0.8, minP: 0.05 } },
  { name: "rep-penalty 1.1/64", options: { temperature: 0.8, repetitionPenalty: 1.1 } },
  { name: "k40+p0.95+minp", options: { temperature: 0.8, topK: 40, topP: 0.95, minP: 0.05 } },
  { name: "p0.95+minp 0.05", options: { temperature: 0.8, topP: 0.95, minP: 0.05 } },
];

/** Vocabulary sizes: all three, or those given on the command line. */
const VOCABS = process.argv.length > 2 ? process.argv.slice(2).map(Number) : [512, 32000, 151936];

/** The straightforward way: copy, sort every id by logit, softmax, cut, draw. */
function naiveSample(logits: Float32Array, o: SamplerOptions, history: number[], rng: Rng): number {
  const work = Array.from(logits);
  const penalty = o.repetitionPenalty ?? 1;
  if (penalty !== 1)
    for (const id of new Set(history.slice(-64)))
      work[id] = work[id]! > 0 ? work[id]! / penalty : work[id]! * penalty;
  const order = work.map((_, i) => i).sort((a, b) => work[b]! - work[a]!);
  const temperature = o.temperature ?? 1;
  if (temperature <= 0) return order[0]!;
  let kept = o.topK ? order.slice(0, o.topK) : order;
  const max = work[kept[0]!]!;
  let probs = kept.map((id) => Math.exp((work[id]! - max) / temperature));
  let total = probs.reduce((a, b) => a + b, 0);
  probs = probs.map((p) => p / total);
  if (o.topP !== undefined && o.topP < 1) {
    let mass = 0;
    let n = 0;
    while (n < probs.length && mass < o.topP) mass += probs[n++]!;
    kept = kept.slice(0, n);
    probs = probs.slice(0, n);
  }
  if (o.minP) {
    const cut = probs[0]! * o.minP;
    const n = probs.filter((p) => p >= cut).length;
    kept = kept.slice(0, n);
    probs = probs.slice(0, n);
  }
  total = probs.reduce((a, b) => a + b, 0);
  let target = rng.next() * total;
  for (let i = 0; i < kept.length; i++) {
    target -= probs[i]!;
    if (target < 0) return kept[i]!;
  }
  return kept[kept.length - 1]!;
}

// ---- naive distribution reads: one plain loop (or sort) per question ----
function naiveMax(l: Float32Array): number {
  let m = -Infinity;
  for (let i = 0; i < l.length; i++) if (l[i]! > m) m = l[i]!;
  return m;
}
function naiveEntropy(l: Float32Array): number {
  const max = naiveMax(l);
  let z = 0;
  let w = 0;
  for (let i = 0; i < l.length; i++) {
    const e = Math.exp(l[i]! - max);
    z += e;
    w += e * (l[i]! - max);
  }
  return Math.log(z) - w / z;
}
/** Writes into `w` the logits with every token outside the nucleus `p` masked (full sort). */
function naiveTopP(l: Float32Array, w: Float32Array, p: number): void {
  w.set(l);
  const order = Array.from({ length: l.length }, (_, i) => i).sort((a, b) => l[b]! - l[a]!);
  const max = l[order[0]!]!;
  let z = 0;
  for (let i = 0; i < l.length; i++) z += Math.exp(l[i]! - max);
  let mass = 0;
  let keep = 0;
  while (keep < l.length && mass < p) mass += Math.exp(l[order[keep++]!]! - max) / z;
  for (let r = keep; r < l.length; r++) w[order[r]!] = -10000;
}
function naiveTop(l: Float32Array, k: number): number[] {
  return Array.from({ length: l.length }, (_, i) => i)
    .sort((a, b) => l[b]! - l[a]!)
    .slice(0, k);
}

interface Read {
  name: string;
  /** Computes exponentials over the vocabulary: timed with llama.cpp's exp kernel and without. */
  exp?: boolean;
  ours: (state: LogitState, logits: Float32Array) => number;
  naive: (logits: Float32Array, work: Float32Array) => number;
}

const READS: Read[] = [
  {
    name: "token stats (p, H)",
    exp: true,
    ours: (s, l) => (s.load(l), s.probability(7) + s.entropy()),
    naive: (l) => naiveEntropy(l) + Math.exp(l[7]! - naiveMax(l)),
  },
  {
    name: "hook: top-5 + H + top1 + argmax",
    exp: true,
    ours: (s, l) => {
      s.load(l);
      let sum = s.entropy() + s.topProb(0) + s.argmax();
      for (let r = 0; r < 5; r++) sum += s.topToken(r) + s.topProb(r);
      return sum;
    },
    naive: (l) => naiveTop(l, 5).reduce((a, b) => a + b, naiveEntropy(l)),
  },
  {
    name: "logit_temperature",
    ours: (s, l) => (s.load(l), s.apply({ op: "temperature", t: 0.7 }), s.logits[0]!),
    naive: (l, w) => {
      for (let i = 0; i < l.length; i++) w[i] = l[i]! / 0.7;
      return w[0]!;
    },
  },
  {
    name: "logit_mask_below",
    ours: (s, l) => (s.load(l), s.apply({ op: "mask-below", threshold: 1 }), s.logits[0]!),
    naive: (l, w) => {
      for (let i = 0; i < l.length; i++) w[i] = l[i]! < 1 ? -10000 : l[i]!;
      return w[0]!;
    },
  },
  {
    name: "logit_top_p 0.9",
    exp: true,
    ours: (s, l) => (s.load(l), s.apply({ op: "top-p", p: 0.9 }), s.logits[0]!),
    naive: (l, w) => (naiveTopP(l, w, 0.9), w[0]!),
  },
  {
    // A hook's usual order (read the entropy, then cut the tail): the statistics' weights
    // serve the nucleus too. Against "token stats" above, the cost of the cut itself.
    name: "H, then logit_top_p 0.9",
    exp: true,
    ours: (s, l) => (s.load(l), s.entropy() + (s.apply({ op: "top-p", p: 0.9 }), s.logits[0]!)),
    naive: (l, w) => (naiveTopP(l, w, 0.9), naiveEntropy(l) + w[0]!),
  },
  {
    name: "snapshot+restore+diff",
    ours: (s, l) => {
      s.load(l);
      s.takeSnapshot(0);
      s.apply({ op: "set", id: 3, value: 1 });
      s.apply({ op: "restore", slot: 0 });
      return s.diff(0);
    },
    naive: (l, w) => {
      w.set(l);
      const snap = Float32Array.from(l);
      w.set(snap);
      let d = 0;
      for (let i = 0; i < l.length; i++) d += Math.abs(w[i]! - snap[i]!);
      return d;
    },
  },
];

function logitsFor(vocab: number, seed: number): Float32Array {
  // Roughly what a model produces: a Gaussian body and a few strong candidates.
  const rng = new Rng(seed);
  const out = new Float32Array(vocab);
  for (let i = 0; i < vocab; i++) {
    const u = Math.max(rng.next(), 1e-12);
    out[i] = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.next()) * 2;
  }
  for (let i = 0; i < 20; i++) out[rng.nextUint32() % vocab] = 8 + 4 * rng.next();
  return out;
}

interface Timing {
  /** Wall-clock ms per step. */
  wall: number;
  /** CPU ms per step (this process): on a shared, loaded machine the steadier of the two. */
  cpu: number;
}

/** Rounds per measurement: each line reports its fastest round, the one least disturbed by
 * other processes on a shared machine (as timeit does). */
const ROUNDS = 5;

/** Time per call, after a warm-up: the fastest of ROUNDS rounds, each over at least minMs / ROUNDS
 * and minSteps calls. */
function perStep(step: () => number, minMs: number, minSteps: number): Timing {
  for (let i = 0; i < 5; i++) step();
  let sink = 0;
  let best: Timing = { wall: Infinity, cpu: Infinity };
  for (let round = 0; round < ROUNDS; round++) {
    let steps = 0;
    const cpu0 = process.cpuUsage();
    const start = process.hrtime.bigint();
    let elapsed = 0;
    while (steps < minSteps || elapsed < (minMs / ROUNDS) * 1e6) {
      sink += step();
      steps++;
      elapsed = Number(process.hrtime.bigint() - start);
    }
    const cpu = process.cpuUsage(cpu0);
    const timing = { wall: elapsed / steps / 1e6, cpu: (cpu.user + cpu.system) / 1000 / steps };
    if (timing.cpu < best.cpu) best = timing;
  }
  if (sink === -1) console.log(sink);
  return best;
}

const ms = (x: number) => x.toFixed(4).padStart(9);
const ratio = (peer: Timing | undefined, ours: Timing) =>
  peer ? `${(peer.cpu / ours.cpu).toFixed(1)}×`.padStart(7) : "      —";

async function main(): Promise<void> {
  const load = loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");
  // Loaded as the engine loads it: this binds llama.cpp's exp kernel (ggml-cpu-kernels.ts).
  await loadLlamaLibrary("cpu").catch(() => undefined); // without it: WebAssembly alone
  console.log(`sampler benchmark · load average ${load} · budget ${BUDGET_MS} ms at 151,936`);
  console.log(
    `distribution reads: ${nativeKernelsStatus()}; ${ggmlCpuKernelsStatus()}; then WebAssembly alone`,
  );
  console.log(
    `ms per step, CPU time (wall in brackets), fastest of ${ROUNDS} rounds; ratios are peer CPU ÷ ours (higher: ours faster);`,
  );
  console.log("floor× is ours ÷ one copy of the logits; budget checks ours (CPU) at 151,936\n");
  console.log(
    `${"vocab".padEnd(8)}${"mode".padEnd(42)}${"ours cpu".padStart(9)}${"(wall)".padStart(10)}  naive  llama.cpp  floor×  budget`,
  );
  for (const vocab of VOCABS) {
    const logits = logitsFor(vocab, vocab);
    const historyRng = new Rng(1);
    const history = Array.from({ length: 256 }, () => historyRng.nextUint32() % vocab);
    const minMs = vocab > 100000 ? 150 : 80;
    const copy = new Float32Array(vocab);
    const floor = perStep(() => (copy.set(logits), copy[0]!), minMs, 20);
    const line = (name: string, ours: Timing, naive?: Timing, peer?: Timing) => {
      const verdict = vocab === 151936 ? (ours.cpu <= BUDGET_MS ? "  ok" : "  over") : "";
      const floorRatio = `${(ours.cpu / floor.cpu).toFixed(1)}×`.padStart(6);
      console.log(
        `${String(vocab).padEnd(8)}${name.padEnd(42)}${ms(ours.cpu)} (${ms(ours.wall)}) ${ratio(naive, ours)} ${ratio(peer, ours)}   ${floorRatio}${verdict}`,
      );
    };
    line("floor: one copy of the logits", floor);
    for (const mode of MODES) {
      const sampler = new Sampler(vocab, { ...mode.options, repetitionWindow: 64, seed: 7 });
      const rng = new Rng(7);
      const ours = perStep(() => sampler.sample(logits, history), minMs, 20);
      const naive = perStep(() => naiveSample(logits, mode.options, history, rng), minMs, 3);
      const chain = await llamaChain(logits, { ...mode.options, seed: 7 });
      const peer = chain ? perStep(() => chain.sample(), minMs, 5) : undefined;
      chain?.dispose();
      line(mode.name, ours, naive, peer);
    }
    // Each read runs on every path; afterwards the switches go back to what the environment
    // (RUFFIAN_NATIVE_KERNELS, RUFFIAN_GGML_KERNELS) chose.
    const [ownOn, ggmlOn] = [nativeKernels() !== undefined, ggmlCpuKernels() !== undefined];
    const state = new LogitState(vocab);
    const work = new Float32Array(vocab);
    for (const read of READS) {
      const naive = perStep(() => read.naive(logits, work), minMs, 3);
      const paths = read.exp
        ? [...(ownOn ? ["native"] : []), ...(ggmlOn ? ["ggml"] : []), "wasm"]
        : [""];
      for (const path of paths) {
        setNativeKernelsEnabled(path === "native" || (path === "" && ownOn));
        setGgmlCpuKernelsEnabled(path === "ggml" || (path !== "wasm" && ggmlOn));
        const ours = perStep(() => read.ours(state, logits), minMs, 20);
        line(path && paths.length > 1 ? `${read.name} · ${path}` : read.name, ours, naive);
      }
      setNativeKernelsEnabled(ownOn);
      setGgmlCpuKernelsEnabled(ggmlOn);
    }
  }
}

await main();
