// Per-decode-step cost of the glass-box engine against node-llama-cpp, measured in one run on
// both test models: `npm run build && node dist/bench/engine.js [steps]`.
import type { LlamaContextSequence, Token } from "node-llama-cpp";
import { loadNodeLlamaModel } from "../src/engine/node-llama-cpp.js";
import { openEngine } from "../src/engine/open.js";
import type { Engine, ObserveOptions } from "../src/engine/types.js";
import { storiesModelPath } from "../src/paths.js";
import { ensureRandomModel } from "../src/nano/random-model.js";
import { defaultThreadCount } from "../src/engine/threads.js";
import { startClock as startPerStep, type Cost } from "./clock.js";

const steps = Number(process.argv[2] ?? 200);
const rounds = Number(process.argv[3] ?? 5);
const prompt = "Once upon a time";

const startClock = () => startPerStep(steps);

function argmax(values: Float32Array): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}

async function peerPlain(sequence: LlamaContextSequence, tokens: Token[]): Promise<Cost> {
  await sequence.clearHistory();
  let n = 0;
  let stop: (() => Cost) | undefined;
  // The first token includes the prompt; timing starts after it.
  for await (const _ of sequence.evaluate(tokens, { temperature: 0 })) {
    if (n === 0) stop = startClock();
    if (++n > steps) break;
  }
  return stop!();
}

async function peerLogits(sequence: LlamaContextSequence, tokens: Token[]): Promise<Cost> {
  await sequence.clearHistory();
  await sequence.evaluateWithoutGeneratingNewTokens(tokens.slice(0, -1));
  let last = tokens.at(-1)!;
  const stop = startClock();
  for (let i = 0; i < steps; i++) {
    const [out] = await sequence.controlledEvaluate([[last, { generateNext: { logits: true } }]]);
    let bestToken = last;
    let bestLogit = -Infinity;
    for (const [t, l] of out?.next?.logits ?? [])
      if (l > bestLogit) [bestToken, bestLogit] = [t, l];
    last = bestToken;
  }
  return stop();
}

function ours(engine: Engine, tokens: number[], observe: ObserveOptions): Cost {
  engine.truncate(0, 0);
  engine.observe({ hidden: false, attention: false, kv: false, finalNorm: false, ...observe });
  engine.decode([{ seq: 0, tokens }]);
  const stop = startClock();
  for (let i = 0; i < steps; i++) engine.decode([{ seq: 0, tokens: [argmax(engine.logits(0))] }]);
  const cost = stop();
  engine.observe({ hidden: false, attention: false, kv: false, finalNorm: false });
  return cost;
}

interface Row {
  label: string;
  wall: number;
  cpu: number;
}

/** µs to fetch the logits view and pick its argmax, the per-step cost of reading all logits. */
function logitAccess(engine: Engine, tokens: number[]): number {
  engine.truncate(0, 0);
  engine.decode([{ seq: 0, tokens }]);
  const n = 2000;
  let sink = 0;
  const start = performance.now();
  for (let i = 0; i < n; i++) sink += argmax(engine.logits(0));
  const us = ((performance.now() - start) / n) * 1000;
  return sink >= 0 ? us : us;
}

async function benchModel(name: string, path: string): Promise<Row[]> {
  const threads = defaultThreadCount();
  const contextSize = 1024;
  const peer = await loadNodeLlamaModel(path, { device: "cpu", threads });
  const context = await peer.model.createContext({ contextSize, threads });
  const sequence = context.getSequence();
  const peerTokens = [peer.model.tokens.bos!, ...peer.model.tokenize(prompt)];
  const glass = await openEngine(path, { device: "cpu", threads, contextSize });
  const plain = await openEngine(path, { device: "cpu", threads, contextSize, glassBox: false });
  const tokens = glass.tokenize(prompt, { addSpecial: true });
  const configs: [string, () => Promise<Cost> | Cost][] = [
    ["node-llama-cpp, plain generation", () => peerPlain(sequence, peerTokens)],
    ["node-llama-cpp, full logits (controlledEvaluate)", () => peerLogits(sequence, peerTokens)],
    ["ruffian, no callback (glassBox: false), logits", () => ours(plain, tokens, {})],
    ["ruffian, glass box idle, logits", () => ours(glass, tokens, {})],
    ["ruffian, all l_out-N observed", () => ours(glass, tokens, { hidden: true })],
    ["ruffian, attention observed", () => ours(glass, tokens, { attention: true })],
    [
      "ruffian, hidden + attention + kv + final norm",
      () => ours(glass, tokens, { hidden: true, attention: true, kv: true, finalNorm: true }),
    ],
  ];
  const rows: Row[] = configs.map(([label]) => ({ label, wall: Infinity, cpu: Infinity }));
  let accessUs = Infinity;
  try {
    // Rounds interleave the configurations so that load from other processes hits all alike;
    // the minimum per configuration is the signal on a shared machine.
    for (let r = 0; r < rounds; r++) {
      for (const [i, [, run]] of configs.entries()) {
        const cost = await run();
        rows[i]!.wall = Math.min(rows[i]!.wall, cost.wall);
        rows[i]!.cpu = Math.min(rows[i]!.cpu, cost.cpu);
      }
      accessUs = Math.min(accessUs, logitAccess(glass, tokens));
    }
  } finally {
    glass.dispose();
    plain.dispose();
    await context.dispose();
    await peer.dispose();
  }
  const vocab = glass.capabilities.nVocab;
  console.log(
    `\n${name} (vocabulary ${vocab}, ${steps} steps, best of ${rounds}, ${threads} thread(s))`,
  );
  const base = rows[0]!;
  console.log("| configuration | wall ms/step | × peer | CPU ms/step | × peer |");
  console.log("|---|---:|---:|---:|---:|");
  for (const r of rows)
    console.log(
      `| ${r.label} | ${r.wall.toFixed(3)} | ${(r.wall / base.wall).toFixed(2)} | ` +
        `${r.cpu.toFixed(3)} | ${(r.cpu / base.cpu).toFixed(2)} |`,
    );
  console.log(`logits view + argmax over ${vocab} entries: ${accessUs.toFixed(1)} µs per step`);
  return rows;
}

await benchModel("stories260K", storiesModelPath);
await benchModel("random-llama (32,000 vocab)", await ensureRandomModel({ vocab: 32000 }));
