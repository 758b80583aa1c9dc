// The VM's promise inside a real decode loop: ruffian-nano (shipped, trained to write [C: …]
// regions) asked for a product that overflows int gets an overflow error injected, never a
// wrapped number; a [CALC: …] region forced into the stories model gets the exact product.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { openEngine } from "../../src/engine/open.js";
import { nanoModelPath, storiesModelPath } from "../../src/paths.js";
import { DecodeLoop, type GenerationRequest } from "../../src/decode/loop.js";
import type { DecodeEvent } from "../../src/decode/events.js";
import { continuationTokens } from "../../src/decode/continuation.js";
import { renderNanoPrompt } from "../../src/nano/format.js";

const nano = await openEngine(nanoModelPath, { device: "cpu", sequences: 1, contextSize: 512 });
const stories = await openEngine(storiesModelPath, {
  device: "cpu",
  sequences: 1,
  contextSize: 512,
});
after(() => {
  nano.dispose();
  stories.dispose();
});

async function run(engine: typeof nano, request: GenerationRequest): Promise<DecodeEvent[]> {
  const events: DecodeEvent[] = [];
  for await (const ev of new DecodeLoop(engine).run([request])) events.push(ev);
  return events;
}

function injections(events: DecodeEvent[]): string[] {
  return events.flatMap((e) => (e.type === "injection" ? [e.text] : []));
}

test("ruffian-nano's [C: 50000*50000] gets an overflow error with its position, not -1794967296", async () => {
  const prompt = renderNanoPrompt([{ role: "user", text: "What is 50000 times 50000?" }]);
  const events = await run(nano, { prompt, maxTokens: 60 });
  const done = events.find((e) => e.type === "done");
  assert.ok(done && done.type === "done");
  assert.match(done.text, /\[C: 50000\*50000\]/, done.text);
  const injected = injections(events);
  assert.equal(injected.length, 1, JSON.stringify(injected));
  assert.match(
    injected[0]!,
    /^ = VM\[error: signed integer overflow: the result of '\*' does not fit in int \(int is 32 bits: use long\) at 1:7\]$/,
  );
  assert.ok(!done.text.includes("-1794967296"), done.text);
});

test("a [CALC: …] region in the stories model gets the exact 18-digit product", async () => {
  const region = " [CALC: 123456789*987654321]";
  const ids = [...region].map((ch) => {
    const t = continuationTokens(stories, ch);
    assert.equal(t.length, 1, `no single token for ${JSON.stringify(ch)}`);
    return t[0]!;
  });
  const hook = `
int ids[] = {${ids.join(", ")}};
int at = 0;
void force(int step) {
  if (at >= ${ids.length}) return;
  logit_set(ids[at], logit_get(logit_argmax()) + 100000);
  at++;
}
int main() { hook_set("force", ${ids.length}); return 0; }`;
  const events = await run(stories, {
    prompt: "Once upon a time",
    maxTokens: ids.length + 8,
    hook,
  });
  assert.deepEqual(injections(events), [" = VM[121932631112635269]"]);
  const done = events.find((e) => e.type === "done");
  assert.ok(done && done.type === "done");
  assert.ok(done.text.startsWith(`${region} = VM[121932631112635269]`), done.text);
});
