// Speed of the in-band decode loop against the engine's bare decode + argmax and node-llama-cpp's
// plain generation of the same model and threads, measured in one run at 512, 32,000 and 151,936
// tokens (random-weight models written by the project's GGUF writer), and on a random-weight
// qwen2 model with Qwen2's real 151,936-token vocabulary (src/models/real-vocab-model.ts), plus
// the latency of one region from its closing token to the next sampled token.
// `npm run build && node dist/bench/decode.js [tokens] [rounds] [models…]` (vocabulary sizes or
// "qwen2" pick models: `node dist/bench/decode.js 100 15 151936` runs both 152K rows, `… qwen2`
// only the real-vocabulary one)
import type { Token } from "node-llama-cpp";
import { loadNodeLlamaModel } from "../src/engine/node-llama-cpp.js";
import { openEngine } from "../src/engine/open.js";
import type { Engine } from "../src/engine/types.js";
import { DecodeLoop } from "../src/decode/loop.js";
import { storiesModelPath } from "../src/paths.js";
import { ensureRandomModel } from "../src/nano/random-model.js";
import { ensureRealVocabModel } from "../src/models/real-vocab-model.js";
import { defaultThreadCount } from "../src/engine/threads.js";
import { VocabBuffers } from "../src/decode/vocab-kernels.js";
import { loadavg } from "node:os";
import { startClock, type Cost } from "./clock.js";

const tokens = Number(process.argv[2] ?? 200);
const rounds = Number(process.argv[3] ?? 5);
/** Vocabulary sizes or names of the models to run (all of them when none is given). */
const only = process.argv.slice(4);
const prompt = "Once upon a time";

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** node-llama-cpp's own generation loop, greedy, ms per token after the first. */
async function peer(modelPath: string): Promise<number> {
  const loaded = await loadNodeLlamaModel(modelPath, { device: "cpu" });
  const context = await loaded.model.createContext({ contextSize: 1024, threads: loaded.threads });
  const sequence = context.getSequence();
  const bos = loaded.model.tokens.bos;
  const input = [...(bos !== null ? [bos] : []), ...loaded.model.tokenize(prompt)] as Token[];
  const times: number[] = [];
  for (let r = 0; r < rounds; r++) {
    await sequence.clearHistory();
    let n = 0;
    let start = 0;
    for await (const _ of sequence.evaluate(input, { temperature: 0 })) {
      if (n === 0) start = performance.now();
      if (++n > tokens) break;
    }
    times.push((performance.now() - start) / tokens);
  }
  await context.dispose();
  await loaded.dispose();
  return median(times);
}

const per = (c: Cost, n: number): Cost => ({ wall: c.wall / n, cpu: c.cpu / n });
const medianCost = (xs: Cost[]): Cost => ({
  wall: median(xs.map((x) => x.wall)),
  cpu: median(xs.map((x) => x.cpu)),
});

/** The engine alone: decode one token, take the argmax of its logits (copied and reduced with
 * the same SIMD kernels the loop uses, so the baseline is as fast as it can be). `buf` is made
 * once per model, as the loop reuses its logit buffers from one generation to the next: a fresh
 * one per round would also hand V8 a new kernel instance in the middle of the loop's rounds. */
function bareEngine(engine: Engine, buf: VocabBuffers): Cost {
  engine.truncate(0, 0);
  engine.decode([{ seq: 0, tokens: engine.tokenize(prompt, { addSpecial: true }) }]);
  const stop = startClock();
  for (let i = 0; i < tokens; i++) {
    buf.logits.set(engine.logits(0));
    engine.decode([{ seq: 0, tokens: [buf.argmax()] }]);
  }
  const cost = per(stop(), tokens);
  engine.truncate(0, 0);
  return cost;
}

/** Our loop: time per sampled token, from the first token event to the last. */
async function loopCost(
  engine: Engine,
  hook: string | undefined,
  tokenStats: boolean,
  overlap?: boolean,
): Promise<Cost> {
  let stop: (() => Cost) | undefined;
  let end: Cost = { wall: 0, cpu: 0 };
  let n = 0;
  const run = new DecodeLoop(engine, { observe: {}, tokenStats, overlap });
  for await (const ev of run.run([{ prompt, maxTokens: tokens + 1, hook }])) {
    if (ev.type === "token") {
      if (n === 0) stop = startClock();
      else end = stop!();
      n++;
    }
  }
  return per(end, n - 1);
}

/** A hook that reads the top-k and the entropy before every token. */
const readingHook = `
int seen = 0;
void watch(int step) {
  int e = vocab_entropy();
  for (int r = 0; r < 5; r++) seen += top_k_token(r) + top_k_prob(r);
  seen += e;
}
int main() { hook_set("watch", 100000); return 0; }`;

/** Forces " [C: 6*7]" so one region closes; returns the split latency of that region. */
async function regionLatency(
  engine: Engine,
): Promise<{ compile: number; run: number; inject: number; total: number }> {
  const pieces = [..." [C: 6*7]"];
  const vocab = new Map<string, number>();
  for (let id = 0; id < engine.capabilities.nVocab; id++) {
    if (!engine.isControl(id) && !vocab.has(engine.tokenText(id)))
      vocab.set(engine.tokenText(id), id);
  }
  const ids = pieces.map((p) => vocab.get(p));
  if (ids.some((id) => id === undefined))
    return { compile: NaN, run: NaN, inject: NaN, total: NaN };
  const hook = `int ids[] = {${ids.join(",")}}; int at = 0;
void force(int s) { if (at < ${ids.length}) { logit_set(ids[at], logit_get(logit_argmax()) + 100000); at++; } }
int main() { hook_set("force", ${ids.length}); return 0; }`;
  const samples: Array<{ compile: number; run: number; inject: number; total: number }> = [];
  for (let r = 0; r < rounds; r++) {
    let compile = 0;
    let run = 0;
    let inject = 0;
    for await (const ev of new DecodeLoop(engine, { observe: {} }).run([
      { prompt, maxTokens: ids.length + 2, hook },
    ])) {
      if (ev.type === "vm" && ev.origin === "region") {
        compile = ev.outcome.stats.compileMs;
        run = ev.outcome.stats.runMs;
      }
      if (ev.type === "injection") inject = ev.decodeMs;
    }
    const total = compile + run + inject;
    samples.push({ compile, run, inject, total });
  }
  const pick = (k: keyof (typeof samples)[number]) => median(samples.map((s) => s[k]));
  return {
    compile: pick("compile"),
    run: pick("run"),
    inject: pick("inject"),
    total: pick("total"),
  };
}

const randomModel = (vocab: number) => ensureRandomModel({ vocab });

async function main(): Promise<void> {
  const all = [
    { name: "stories260K (512 vocab)", vocab: 512, path: () => storiesModelPath },
    { name: "random-llama (32,000 vocab)", vocab: 32000, path: () => randomModel(32000) },
    { name: "random-llama (151,936 vocab)", vocab: 151936, path: () => randomModel(151936) },
    {
      name: "qwen2 real vocab (151,936)",
      vocab: 151936,
      key: "qwen2",
      path: () => ensureRealVocabModel({ vocabulary: "qwen2" }),
    },
  ];
  const chosen = all.filter(
    (m) => only.length === 0 || only.includes(String(m.vocab)) || (m.key && only.includes(m.key)),
  );
  if (chosen.length === 0) {
    console.error(`decode bench: no model is ${only.join(", ")} (512, 32000, 151936, qwen2)`);
    process.exit(2);
  }
  const models = [];
  for (const m of chosen) models.push({ name: m.name, path: await m.path() });
  console.log(
    `decode loop benchmark: ${tokens} tokens × ${rounds} rounds (median), ${defaultThreadCount()} thread(s), load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")}`,
  );
  console.log(
    "ms per token, wall (CPU of all threads in brackets); ratios are against the engine's bare decode + argmax;\n" +
      "the last column overlaps the loop's work with the decode on the core llama.cpp's thread count leaves free\n" +
      "(off by default: RUFFIAN_OVERLAP=1 turns it on everywhere)\n",
  );
  console.log(
    `${"model".padEnd(30)}${"node-llama-cpp".padStart(16)}${"bare engine".padStart(22)}${"loop".padStart(22)}${"+stats".padStart(22)}${"+stats+hook".padStart(22)}${"same, overlapped".padStart(22)}  hook ratio (wall / CPU)`,
  );
  for (const m of models) {
    const peerMs = await peer(m.path);
    const engine = await openEngine(m.path, { device: "cpu", contextSize: 1024, glassBox: false });
    // Rounds interleave the four variants so that load on the machine hits them alike.
    const samples: Cost[][] = [[], [], [], [], []];
    const bareBuffers = new VocabBuffers(engine.capabilities.nVocab);
    for (let r = 0; r < rounds; r++) {
      samples[0]!.push(bareEngine(engine, bareBuffers));
      samples[1]!.push(await loopCost(engine, undefined, false));
      samples[2]!.push(await loopCost(engine, undefined, true));
      samples[3]!.push(await loopCost(engine, readingHook, true));
      // The same loop with its work done during each decode rather than before it.
      samples[4]!.push(await loopCost(engine, readingHook, true, true));
    }
    engine.dispose();
    const [bare, plain, stats, hooked, overlapped] = samples.map(medianCost) as [
      Cost,
      Cost,
      Cost,
      Cost,
      Cost,
    ];
    const f = (c: Cost) =>
      `${c.wall.toFixed(3)} (${c.cpu.toFixed(3)}) ${(c.wall / bare.wall).toFixed(2)}×`.padStart(22);
    console.log(
      `${m.name.padEnd(30)}${`${peerMs.toFixed(3)} ms`.padStart(16)}${f(bare)}${f(plain)}${f(stats)}${f(hooked)}${f(overlapped)}  ${(hooked.wall / bare.wall).toFixed(2)}× / ${(hooked.cpu / bare.cpu).toFixed(2)}×`,
    );
  }
  console.log(
    "\nregion latency: closing ']' decoded → result in the KV cache, ready to sample (median)",
  );
  for (const m of models) {
    const engine = await openEngine(m.path, { device: "cpu", contextSize: 1024, glassBox: false });
    const l = await regionLatency(engine);
    engine.dispose();
    console.log(
      `${m.name.padEnd(36)} compile ${l.compile.toFixed(3)} ms · run ${l.run.toFixed(3)} ms · inject decode ${l.inject.toFixed(3)} ms · total ${l.total.toFixed(3)} ms`,
    );
  }
}

await main();
