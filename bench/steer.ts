// Cost of steering on stories260K, each against its peer without steering measured in the same
// run (rounds interleaved, median): per decode step with a control vector (llama.cpp's own
// llama_set_adapter_cvec, and our per-sequence graph-tap application), per generated token in
// the decode loop with --control-vector and with a steering hook; then `trace` time and bytes
// per layer. `npm run build && node dist/bench/steer.js [steps] [rounds]`
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

/** ms per decode step (one token, logits read, greedy), wall and process CPU. */
function decodeSteps(engine: LlamaEngine): Timing {
  const tokens = engine.tokenize(prompt, { addSpecial: true });
  engine.truncate(0, 0);
  engine.decode([{ seq: 0, tokens }]);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < steps; i++) {
    const l = engine.logits(0);
    let best = 0;
    for (let j = 1; j < l.length; j++) if (l[j]! > l[best]!) best = j;
    engine.decode([{ seq: 0, tokens: [best] }]);
  }
  const wall = (performance.now() - t0) / steps;
  const c = process.cpuUsage(c0);
  return { wall, cpu: (c.user + c.system) / 1000 / steps };
}

/** ms per sampled token through the decode loop. */
async function loopTokens(
  engine: LlamaEngine,
  request: Partial<GenerationRequest>,
): Promise<Timing> {
  let first = 0;
  let last = 0;
  let n = 0;
  let c0 = process.cpuUsage();
  const loop = new DecodeLoop(engine, { observe: {} });
  for await (const ev of loop.run([{ prompt, maxTokens: steps + 1, ...request }])) {
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

const one = await openEngine(storiesModelPath, { device: "cpu", sequences: 1 });
const two = await openEngine(storiesModelPath, { device: "cpu", sequences: 2 });
const cv = vector(one.capabilities.nEmbd);
const scaled = scaledDirections(cv, 1);
one.observe({ hidden: false, attention: false, kv: false, finalNorm: false });
two.observe({ hidden: false, attention: false, kv: false, finalNorm: false });

const r: Record<string, Timing[]> = {};
const add = (k: string, t: Timing) => (r[k] ??= []).push(t);
const vectors = new Map([["v", cv]]);
// Toggles the vector by entropy every token: the per-token VM call plus real changes.
const steeringHook = `int v;
void steer(int step) { if (vocab_entropy() > 1500) cvec_apply(v, 1000); else cvec_clear(); }
int main() { v = cvec_load("v"); hook_set("steer", 100000); return 0; }`;
// Keeps one vector applied from a hook every token (the engine is only touched once).
const holdHook = `int v;
void steer(int step) { cvec_apply(v, 1000); }
int main() { v = cvec_load("v"); hook_set("steer", 100000); return 0; }`;
const emptyHook = `void steer(int step) { }
int main() { hook_set("steer", 100000); return 0; }`;
for (let round = 0; round < rounds; round++) {
  one.setControlVector(0, null);
  add("step none (1 seq)", decodeSteps(one));
  one.setControlVector(0, scaled);
  add("step native cvec", decodeSteps(one));
  one.setControlVector(0, null);
  two.setControlVector(0, null);
  add("step none (2 seq)", decodeSteps(two));
  two.setControlVector(0, scaled);
  add("step tap cvec", decodeSteps(two));
  two.setControlVector(0, null);

  add("loop none", await loopTokens(one, {}));
  one.setControlVector(0, scaled);
  add("loop --control-vector", await loopTokens(one, {}));
  one.setControlVector(0, null);
  add("loop empty hook", await loopTokens(one, { hook: emptyHook }));
  add("loop hold hook", await loopTokens(one, { hook: holdHook, vectors }));
  add("loop entropy hook", await loopTokens(one, { hook: steeringHook, vectors }));
  add("loop entropy hook (2 seq, tap)", await loopTokens(two, { hook: steeringHook, vectors }));
  add("loop none (2 seq)", await loopTokens(two, {}));
}

console.log(
  `stories260K, ${steps} steps × ${rounds} rounds (median), threads ${one.capabilities.threads}, load ${loadavg()
    .map((x) => x.toFixed(2))
    .join(" ")}`,
);
console.log("\n| configuration | wall ms | × peer | CPU ms | × peer |\n|---|---:|---:|---:|---:|");
console.log(row("decode step, no vector (peer)", r["step none (1 seq)"]!, r["step none (1 seq)"]!));
console.log(
  row(
    "decode step, control vector via llama_set_adapter_cvec",
    r["step native cvec"]!,
    r["step none (1 seq)"]!,
  ),
);
console.log(
  row(
    "decode step, 2-seq context, no vector (peer)",
    r["step none (2 seq)"]!,
    r["step none (2 seq)"]!,
  ),
);
console.log(
  row(
    "decode step, 2-seq context, control vector via graph tap",
    r["step tap cvec"]!,
    r["step none (2 seq)"]!,
  ),
);
console.log(row("decode loop, no hook (peer)", r["loop none"]!, r["loop none"]!));
console.log(row("decode loop, --control-vector", r["loop --control-vector"]!, r["loop none"]!));
console.log(row("decode loop, empty hook every token", r["loop empty hook"]!, r["loop none"]!));
console.log(
  row("decode loop, hook applying a vector every token", r["loop hold hook"]!, r["loop none"]!),
);
console.log(
  row("decode loop, hook toggling a vector by entropy", r["loop entropy hook"]!, r["loop none"]!),
);
console.log(
  row(
    "decode loop, 2-seq context, no hook (peer)",
    r["loop none (2 seq)"]!,
    r["loop none (2 seq)"]!,
  ),
);
console.log(
  row(
    "decode loop, 2-seq context, entropy hook via tap",
    r["loop entropy hook (2 seq, tap)"]!,
    r["loop none (2 seq)"]!,
  ),
);

// ---- trace: time and bytes per layer ----
const long = Array.from(
  { length: 8 },
  () => "Once upon a time, there was a little girl named Lily.",
).join(" ");
const tokens = one.tokenize(long, { addSpecial: true });
console.log(`\ntrace of ${tokens.length} positions (median of ${rounds}):\n`);
console.log(
  "| hook points | tensors | ms | ms per layer | bytes | bytes per layer |\n|---|---:|---:|---:|---:|---:|",
);
const nLayer = one.capabilities.nLayer;
for (const hooks of [
  "blocks.*.hook_resid_post",
  "blocks.*.attn.hook_pattern",
  "blocks.*.attn.hook_rot_k,blocks.*.attn.hook_v",
  "blocks.*.hook_resid_post,blocks.*.attn.*,ln_final.hook_normalized,logits",
]) {
  const points = expandHookPoints(hooks, one.capabilities);
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    const tensors = traceTokens(one, tokens, points);
    times.push(performance.now() - t0);
    bytes = tensors.reduce((s, t) => s + t.data.byteLength, 0);
  }
  const ms = median(times);
  console.log(
    `| \`${hooks}\` | ${points.length} | ${ms.toFixed(2)} | ${(ms / nLayer).toFixed(2)} | ${bytes} | ${Math.round(bytes / nLayer)} |`,
  );
}
one.dispose();
two.dispose();
