// Speed of the in-band decode loop against node-llama-cpp's plain generation of the same model and
// threads, measured in one run on both test models, plus the latency of one region from its closing
// token to the next sampled token.  `npm run build && node dist/bench/decode.js [tokens] [rounds]`
import type { Token } from "node-llama-cpp";
import { loadNodeLlamaModel } from "../src/engine/node-llama-cpp.js";
import { openEngine } from "../src/engine/open.js";
import type { Engine } from "../src/engine/types.js";
import { DecodeLoop } from "../src/decode/loop.js";
import { storiesModelPath } from "../src/paths.js";
import { ensureRandomModel } from "../src/nano/random-model.js";
import { defaultThreadCount } from "../src/engine/threads.js";

const tokens = Number(process.argv[2] ?? 200);
const rounds = Number(process.argv[3] ?? 5);
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

/** Our loop: ms per sampled token, timed from the first token event to the last. */
async function loop(
  engine: Engine,
  hook: string | undefined,
  tokenStats: boolean,
): Promise<number> {
  const times: number[] = [];
  for (let r = 0; r < rounds; r++) {
    let first = 0;
    let last = 0;
    let n = 0;
    const run = new DecodeLoop(engine, { observe: {}, tokenStats });
    for await (const ev of run.run([{ prompt, maxTokens: tokens + 1, hook }])) {
      if (ev.type === "token") {
        if (n === 0) first = performance.now();
        last = performance.now();
        n++;
      }
    }
    times.push((last - first) / (n - 1));
  }
  return median(times);
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

async function main(): Promise<void> {
  const models = [
    { name: "stories260K (512 vocab)", path: storiesModelPath },
    { name: "random-llama (32,000 vocab)", path: await ensureRandomModel({ vocab: 32000 }) },
  ];
  console.log(
    `decode loop benchmark: ${tokens} tokens × ${rounds} rounds (median), ${defaultThreadCount()} thread(s)\n`,
  );
  console.log(
    "model                               node-llama-cpp  loop(no stats)  ratio   loop(stats)  ratio   +hook   hook/loop",
  );
  for (const m of models) {
    const peerMs = await peer(m.path);
    const engine = await openEngine(m.path, { device: "cpu", contextSize: 1024, glassBox: false });
    const bare = await loop(engine, undefined, false);
    const stats = await loop(engine, undefined, true);
    const hooked = await loop(engine, readingHook, true);
    engine.dispose();
    const f = (x: number) => `${x.toFixed(3)} ms`.padStart(10);
    console.log(
      `${m.name.padEnd(36)}${f(peerMs)}    ${f(bare)}    ${(bare / peerMs).toFixed(2)}×  ${f(stats)}  ${(stats / peerMs).toFixed(2)}×  ${f(hooked)}  ${(hooked / stats).toFixed(2)}×`,
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
