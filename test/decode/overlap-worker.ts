// Run in a worker thread by overlap.test.ts, as the server's decode worker runs the loop: the
// same generation with the overlap on and off, and whether the token events arrived while
// their decode was in flight (so llama_decode really ran on a libuv thread from this one).
import { parentPort } from "node:worker_threads";
import { openEngine } from "../../src/engine/open.js";
import { EngineError } from "../../src/engine/errors.js";
import { storiesModelPath } from "../../src/paths.js";
import { DecodeLoop } from "../../src/decode/loop.js";

const engine = await openEngine(storiesModelPath, {
  device: "cpu",
  contextSize: 256,
  glassBox: false,
});
const hook = `void watch(int step) { printf("%d\\n", vocab_entropy()); }
int main() { hook_set("watch", 100); return 0; }`;

async function generate(overlap: boolean): Promise<{ tokens: number[]; inFlight: number }> {
  const tokens: number[] = [];
  let inFlight = 0;
  const loop = new DecodeLoop(engine, { overlap });
  for await (const ev of loop.run([{ prompt: "Once upon a time", maxTokens: 12, hook }])) {
    if (ev.type !== "token") continue;
    tokens.push(ev.id);
    try {
      engine.length(0);
    } catch (err) {
      if (err instanceof EngineError && err.code === "busy") inFlight++;
      else throw err;
    }
  }
  return { tokens, inFlight };
}

const on = await generate(true);
const off = await generate(false);
engine.dispose();
parentPort!.postMessage({ on, off });
