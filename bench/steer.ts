// Cost of steering on stories260K, each configuration against its peer without steering measured
// in the same run (rounds interleaved, median): per decode step with a control vector (held,
// changed every step, and in a batch mixing steered and unsteered sequences, which needs the
// graph tap), per generated token in the decode loop with --control-vector and with steering
// hooks; then `trace` time and bytes per layer.
// `npm run build && node dist/bench/steer.js [steps] [rounds]`
import { openEngine, type LlamaEngine } from "../src/engine/open.js";
import { DecodeLoop, type GenerationRequest } from "../src/decode/loop.js";
import { storiesModelPath } from "../src/paths.js";
import type { ControlVector } from "../src/steer/control-vector.js";
import { scaledDirections } from "../src/steer/control-vector.js";
import { expandHookPoints } from "../src/steer/hook-points.js";
import { traceTokens } from "../src/steer/trace.js";
import { loadavg } from "node:os";

const steps = Number(process.argv[2] ?? 200);
const rounds = Number(process.argv[3] ?? 7);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const prompt = "Once upon a time";

/** A fixed, non-trivial vector on layers 1..4 (the size of a trained happy/sad one). */
function vector(nEmbd: number): ControlVector {
  const directions = new Map<number, Float32Array>();
  for (let l = 1; l <= 4; l++)
    directions.set(
      l,
      Float32Array.from({ length: nEmbd }, (_, i) => Math.sin(i * l) * 0.2 * l),
    );
  return { nEmbd, directions };
}

interface Timing {
  wall: number;
  cpu: number;
}

const greedy = (l: Float32Array) => {
  let best = 0;
  for (let j = 1; j < l.length; j++) if (l[j]! > l[best]!) best = j;
  return best;
};

/**
 * ms per decode step (one token per sequence in `seqs`, logits read, greedy), wall and process
 * CPU; `beforeStep` may change the steering between steps.
 */
function decodeSteps(
  engine: LlamaEngine,
  seqs: number[],
  beforeStep: (step: number) => void = () => {},
): Timing {
  const tokens = engine.tokenize(prompt, { addSpecial: true });
  for (const seq of seqs) engine.truncate(seq, 0);
  engine.decode(seqs.map((seq) => ({ seq, tokens })));
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < steps; i++) {
    beforeStep(i);
    engine.decode(seqs.map((seq) => ({ seq, tokens: [greedy(engine.logits(seq))] })));
  }
  const wall = (performance.now() - t0) / steps;
  const c = process.cpuUsage(c0);
  return { wall, cpu: (c.user + c.system) / 1000 / steps };
}

/** ms per sampled token through the decode loop (all requests' tokens together). */
async function loopTokens(
  engine: LlamaEngine,
  requests: Partial<GenerationRequest>[],
): Promise<Timing> {
  let first = 0;
  let last = 0;
  let n = 0;
  let c0 = process.cpuUsage();
  const loop = new DecodeLoop(engine, { observe: {} });
  const all = requests.map((r, seq) => ({ prompt, maxTokens: steps + 1, seq, ...r }));
  for await (const ev of loop.run(all)) {
    if (ev.type !== "token") continue;
    if (n === 0) {
      first = performance.now();
      c0 = process.cpuUsage();
    }
    last = performance.now();
    n++;
  }
  const c = process.cpuUsage(c0);
  return { wall: (last - first) / (n - 1), cpu: (c.user + c.system) / 1000 / (n - 1) };
}

function row(name: string, t: Timing[], peer: Timing[]): string {
  const w = median(t.map((x) => x.wall));
  const c = median(t.map((x) => x.cpu));
  const pw = median(peer.map((x) => x.wall));
  const pc = median(peer.map((x) => x.cpu));
  return `| ${name} | ${w.toFixed(3)} | ${(w / pw).toFixed(3)} | ${c.toFixed(3)} | ${(c / pc).toFixed(3)} |`;
}

// Peers run on engines that never see a vector, so nothing left installed by a steered run
// (llama.cpp's vector stays in the graph, zeroed, for a while after its last use) reaches them.
const open = (sequences: number) => openEngine(storiesModelPath, { device: "cpu", sequences });
const peer1 = await open(1);
const steer1 = await open(1);
const peer2 = await open(2);
const steer2 = await open(2);
const engines = [peer1, steer1, peer2, steer2];
for (const e of engines)
  e.observe({ hidden: false, attention: false, kv: false, finalNorm: false });
const cv = vector(peer1.capabilities.nEmbd);
const scaled = scaledDirections(cv, 1);
const halved = scaledDirections(cv, 0.5);

const r: Record<string, Timing[]> = {};
const add = (k: string, t: Timing) => (r[k] ??= []).push(t);
const vectors = new Map([["v", cv]]);
// Toggles the vector by entropy every token: the per-token VM call plus real changes.
const steeringHook = `int v;
void steer(int step) { if (vocab_entropy() > 1500) cvec_apply(v, 1000); else cvec_clear(); }
int main() { v = cvec_load("v"); hook_set("steer", 100000); return 0; }`;
// Changes the vector's scale at every token, the worst case for llama.cpp's vector.
const alternateHook = `int v;
void steer(int step) { cvec_apply(v, step % 2 ? 1000 : 500); }
int main() { v = cvec_load("v"); hook_set("steer", 100000); return 0; }`;
const emptyHook = `void steer(int step) { }
int main() { hook_set("steer", 100000); return 0; }`;
const installsBefore = steer1.controlVectorCounters().installs;
for (let round = 0; round < rounds; round++) {
  add("step none (1 seq)", decodeSteps(peer1, [0]));
  steer1.setControlVector(0, scaled);
  add("step vector held", decodeSteps(steer1, [0]));
  add(
    "step vector changed every step",
    decodeSteps(steer1, [0], (i) => steer1.setControlVector(0, i % 2 ? scaled : halved)),
  );
  steer1.setControlVector(0, null);
  add("step none (2 seq)", decodeSteps(peer2, [0, 1]));
  steer2.setControlVector(0, scaled);
  add("step mixed batch (tap)", decodeSteps(steer2, [0, 1]));
  steer2.setControlVector(1, scaled);
  add("step shared vector (2 seq)", decodeSteps(steer2, [0, 1]));
  steer2.setControlVector(0, null);
  steer2.setControlVector(1, null);

  add("loop none", await loopTokens(peer1, [{}]));
  steer1.setControlVector(0, scaled);
  add("loop --control-vector", await loopTokens(steer1, [{}]));
  steer1.setControlVector(0, null);
  add("loop empty hook", await loopTokens(peer1, [{ hook: emptyHook }]));
  add("loop alternate hook", await loopTokens(steer1, [{ hook: alternateHook, vectors }]));
  add("loop entropy hook", await loopTokens(steer1, [{ hook: steeringHook, vectors }]));
  add("loop none (2 seq)", await loopTokens(peer2, [{}, {}]));
  add(
    "loop entropy hook (2 seq, tap)",
    await loopTokens(steer2, [{ hook: steeringHook, vectors }, {}]),
  );
}
const counters = steer1.controlVectorCounters();

console.log(
  `stories260K, ${steps} steps × ${rounds} rounds (median), threads ${peer1.capabilities.threads}, load ${loadavg()
    .map((x) => x.toFixed(2))
    .join(" ")}`,
);
console.log("\n| configuration | wall ms | × peer | CPU ms | × peer |\n|---|---:|---:|---:|---:|");
const rows: [string, string, string][] = [
  ["decode step, no vector (peer)", "step none (1 seq)", "step none (1 seq)"],
  ["decode step, control vector held", "step vector held", "step none (1 seq)"],
  ["decode step, vector changed every step", "step vector changed every step", "step none (1 seq)"],
  ["decode step, 2 sequences, no vector (peer)", "step none (2 seq)", "step none (2 seq)"],
  ["decode step, 2 sequences sharing a vector", "step shared vector (2 seq)", "step none (2 seq)"],
  [
    "decode step, 2 sequences, one steered (graph tap)",
    "step mixed batch (tap)",
    "step none (2 seq)",
  ],
  ["decode loop, no hook (peer)", "loop none", "loop none"],
  ["decode loop, --control-vector", "loop --control-vector", "loop none"],
  ["decode loop, empty hook every token", "loop empty hook", "loop none"],
  ["decode loop, hook changing the vector every token", "loop alternate hook", "loop none"],
  ["decode loop, hook toggling a vector by entropy", "loop entropy hook", "loop none"],
  ["decode loop, 2 requests, no hook (peer)", "loop none (2 seq)", "loop none (2 seq)"],
  [
    "decode loop, 2 requests, one with the entropy hook (tap)",
    "loop entropy hook (2 seq, tap)",
    "loop none (2 seq)",
  ],
];
for (const [name, k, peer] of rows) console.log(row(name, r[k]!, r[peer]!));
console.log(
  `\nllama.cpp's vector on the one-sequence engine: ${counters.installs - installsBefore} ` +
    `(re)installs (each re-plans the graph), ${counters.inPlaceWrites} in-place rewrites`,
);

// ---- trace: time and bytes per layer ----
const long = Array.from(
  { length: 8 },
  () => "Once upon a time, there was a little girl named Lily.",
).join(" ");
const tokens = peer1.tokenize(long, { addSpecial: true });
console.log(`\ntrace of ${tokens.length} positions (median of ${rounds}):\n`);
console.log(
  "| hook points | tensors | ms | ms per layer | bytes | bytes per layer |\n|---|---:|---:|---:|---:|---:|",
);
const nLayer = peer1.capabilities.nLayer;
for (const hooks of [
  "blocks.*.hook_resid_post",
  "blocks.*.attn.hook_pattern",
  "blocks.*.attn.hook_k,blocks.*.attn.hook_rot_k,blocks.*.attn.hook_v",
  "blocks.*.hook_resid_post,blocks.*.attn.*,ln_final.hook_normalized,logits",
]) {
  const points = expandHookPoints(hooks, peer1.capabilities);
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    const tensors = traceTokens(peer1, tokens, points);
    times.push(performance.now() - t0);
    bytes = tensors.reduce((s, t) => s + t.data.byteLength, 0);
  }
  const ms = median(times);
  console.log(
    `| \`${hooks}\` | ${points.length} | ${ms.toFixed(2)} | ${(ms / nLayer).toFixed(2)} | ${bytes} | ${Math.round(bytes / nLayer)} |`,
  );
}
for (const e of engines) e.dispose();
