// Sampler cost per step (ns) at 512, 32,000 and 151,936 vocabulary entries for each mode,
// against a naive full-sort sampler measured in the same run. Run: node dist/bench/sampler.js
import { Rng, Sampler, type SamplerOptions } from "../src/decode/sampler.js";

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
];

const VOCABS = [512, 32000, 151936];

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

function timePerStep(step: () => number, minMs: number, minSteps: number): number {
  for (let i = 0; i < 3; i++) step();
  let steps = 0;
  let sink = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0;
  while (steps < minSteps || elapsed < minMs * 1e6) {
    sink += step();
    steps++;
    elapsed = Number(process.hrtime.bigint() - start);
  }
  if (sink === -1) console.log(sink);
  return elapsed / steps;
}

function pad(s: string, n: number): string {
  return s.length >= n ? s : s + " ".repeat(n - s.length);
}

function main(): void {
  console.log(
    "sampler ns/step: ruffian Sampler (partial selection, preallocated) vs naive full sort",
  );
  console.log(
    `${pad("vocab", 8)}${pad("mode", 22)}${pad("ruffian", 12)}${pad("naive", 14)}speedup`,
  );
  for (const vocab of VOCABS) {
    const logits = logitsFor(vocab, vocab);
    const historyRng = new Rng(1);
    const history = Array.from({ length: 256 }, () => historyRng.nextUint32() % vocab);
    const minMs = vocab > 100000 ? 150 : 100;
    for (const mode of MODES) {
      const sampler = new Sampler(vocab, { ...mode.options, repetitionWindow: 64, seed: 7 });
      const rng = new Rng(7);
      const ours = timePerStep(() => sampler.sample(logits, history), minMs, 20);
      const naive = timePerStep(() => naiveSample(logits, mode.options, history, rng), minMs, 3);
      console.log(
        `${pad(String(vocab), 8)}${pad(mode.name, 22)}${pad(ours.toFixed(0), 12)}${pad(naive.toFixed(0), 14)}${(naive / ours).toFixed(1)}x`,
      );
    }
  }
}

main();
