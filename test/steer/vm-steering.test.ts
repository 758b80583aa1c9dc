// Steering from VM code on stories260K: lookahead leaves the sequence exactly as it was,
// act_read/act_norm read the engine's recordings by hook-point name, and a hook that applies a
// control vector only above an entropy threshold changes only the steps after those it chose.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { openEngine } from "../../src/engine/open.js";
import { DecodeLoop, type GenerationRequest } from "../../src/decode/loop.js";
import type { DecodeEvent, TokenEvent } from "../../src/decode/events.js";
import { entropyNats } from "../decode/reference.js";
import { packageRoot } from "../../src/paths.js";
import { trainControlVector } from "../../src/steer/train.js";
import type { ControlVector } from "../../src/steer/control-vector.js";
import { storiesModelPath } from "../engine/helpers.js";

const fixtures = join(packageRoot, "test", "fixtures", "steer");
const lines = (f: string) =>
  readFileSync(join(fixtures, f), "utf8")
    .split("\n")
    .filter((l) => l.trim());
const PROMPT = "Once upon a time, there was a little girl. She felt very";

const engine = await openEngine(storiesModelPath, { device: "cpu", sequences: 2 });
let happy: ControlVector;
before(() => {
  happy = trainControlVector(engine, lines("happy.txt"), lines("sad.txt"), {
    method: "mean-diff",
    layers: [1, 2, 3, 4],
  });
});
after(() => engine.dispose());

async function generate(request: Partial<GenerationRequest>): Promise<DecodeEvent[]> {
  const events: DecodeEvent[] = [];
  const loop = new DecodeLoop(engine);
  for await (const ev of loop.run([{ prompt: PROMPT, maxTokens: 16, ...request }])) events.push(ev);
  return events;
}
const tokensOf = (evs: DecodeEvent[]) => evs.filter((e): e is TokenEvent => e.type === "token");
const logsOf = (evs: DecodeEvent[]) =>
  evs.flatMap((e) =>
    e.type === "hook-log" ? [e.text] : e.type === "hook-error" ? [`ERROR ${e.message}`] : [],
  );

test("lookahead leaves KV cache, recordings and every sequence's logits exactly as they were", () => {
  engine.observe({ hidden: true, attention: true, kv: true, finalNorm: true });
  const a = engine.tokenize(PROMPT, { addSpecial: true });
  const b = engine.tokenize("Tom had a red ball.", { addSpecial: true });
  engine.truncate(0, 0);
  engine.truncate(1, 0);
  engine.decode([
    { seq: 0, tokens: a },
    { seq: 1, tokens: b },
  ]);
  const state = engine.sequenceState(0);
  const logits0 = Float32Array.from(engine.logits(0));
  const logits1 = Float32Array.from(engine.logits(1));
  const hidden = Float32Array.from(engine.hidden(0, 3, a.length - 1)!);
  const first = engine.tokenize(" happy").at(-1)!;
  const entropies = engine.lookahead(0, first, 4, (l) => entropyNats(l));
  assert.equal(entropies.length, 4);
  // The scores are those of the real continuation: decode it for real and compare.
  assert.equal(engine.length(0), a.length);
  assert.deepEqual(engine.sequenceState(0), state);
  assert.deepEqual(engine.logits(0), logits0);
  assert.deepEqual(engine.logits(1), logits1);
  assert.deepEqual(engine.hidden(0, 3, a.length - 1), hidden);
  assert.equal(engine.hidden(0, 3, a.length), undefined, "the scratch positions are gone");
  let token = first;
  for (let i = 0; i < 4; i++) {
    engine.decode([{ seq: 0, tokens: [token] }]);
    const l = engine.logits(0);
    assert.ok(Math.abs(entropyNats(l) - entropies[i]!) < 1e-9, `step ${i}`);
    token = l.indexOf(Math.max(...l));
  }
});

test("act_read and act_norm return the engine's recordings by hook-point name", async () => {
  const hook = `
    void probe(int step) {
      printf("%d %d %d\\n", (int)(act_read("blocks.2.hook_resid_post", 3, 5) * 1000000),
             (int)(act_norm("blocks.2.hook_resid_post", 3) * 1000000),
             (int)(act_read("blocks.1.attn.hook_v", 2, 7) * 1000000));
    }
    int main() { hook_set("probe", 1); return 0; }`;
  const evs = await generate({ hook, maxTokens: 1 });
  const [read, norm, v] = logsOf(evs)[0]!.trim().split(" ").map(Number);
  const row = engine.hidden(0, 2, 3)!;
  assert.equal(read, Math.trunc(row[5]! * 1e6));
  assert.ok(
    Math.abs(norm! - Math.hypot(...row) * 1e6) <= 2,
    `${norm} vs ${Math.hypot(...row) * 1e6}`,
  );
  const headDim = engine.capabilities.headDim;
  assert.equal(
    v,
    Math.trunc(engine.kv(0, 1, Math.floor(7 / headDim), 2, "v")![7 % headDim]! * 1e6),
  );
  const bad = await generate({
    hook: `void p(int s) { act_read("blocks.9.hook_resid_post", 0, 0); }
           int main() { hook_set("p", 1); return 0; }`,
    maxTokens: 1,
  });
  assert.match(logsOf(bad).join(""), /layer 9 is outside 0\.\.4/);
});

test("vm_lookahead reports the continuation's entropy and disturbs nothing", async () => {
  const plain = await generate({});
  const hook = `
    void look(int step) { printf("%d\\n", vm_lookahead(top_k_token(1), 3)); }
    int main() { hook_set("look", 1000); return 0; }`;
  const looked = await generate({ hook });
  assert.deepEqual(tokensOf(looked), tokensOf(plain));
  const values = logsOf(looked).map(Number);
  assert.equal(values.length, tokensOf(plain).length);
  for (const v of values) assert.ok(v > 0 && v < Math.log(512) * 1000, `${v} millinats`);
});

test("vm_lookahead before any read of the step's logits leaves the step's sampling as it was", async () => {
  // The lookahead's scratch decodes overwrite llama.cpp's logits buffer: the step must sample
  // from the logits it had before them, whichever kernels copy them in.
  const plain = await generate({});
  const hook = `
    void look(int step) { vm_lookahead(7, 3); }
    int main() { hook_set("look", 1000); return 0; }`;
  assert.deepEqual(tokensOf(await generate({ hook })), tokensOf(plain));
});

test("a vector applied only above an entropy threshold changes only the steps after those", async () => {
  const vectors = new Map([["happy", happy]]);
  const hookAt = (threshold: number) => `
    int v;
    void steer(int step) {
      if (vocab_entropy() > ${threshold}) { cvec_apply(v, 2000); printf("%d\\n", step); }
      else cvec_clear();
    }
    int main() { v = cvec_load("happy"); hook_set("steer", 1000); return 0; }`;
  const plain = tokensOf(await generate({ vectors }));
  // A threshold no step reaches: nothing changes at all.
  assert.deepEqual(tokensOf(await generate({ vectors, hook: hookAt(100000) })), plain);
  const evs = await generate({ vectors, hook: hookAt(2500) });
  const steered = tokensOf(evs);
  const chosen = logsOf(evs).map(Number);
  assert.ok(chosen.length > 0, "some step is above 2.5 nats");
  assert.ok(chosen.length < steered.length, "and some below");
  for (const step of chosen) assert.ok(steered[step]!.entropy > 2.5, `step ${step} was unsure`);
  const first = chosen[0]!;
  // Up to and including the first chosen step the run is the plain one (the vector acts from
  // the next forward pass on), and the step after it differs.
  assert.deepEqual(steered.slice(0, first + 1), plain.slice(0, first + 1));
  assert.notEqual(steered[first + 1]!.probability, plain[first + 1]!.probability);
  assert.equal(engine.controlVectorOf(0), null, "the vector is removed when the generation ends");
  const unknown = await generate({
    hook: `int main() { cvec_load("nope"); return 0; }`,
    vectors,
    maxTokens: 1,
  });
  assert.ok(
    unknown.some(
      (e) =>
        e.type === "vm" &&
        !e.outcome.ok &&
        /no control vector named 'nope' \(known: happy\)/.test(e.outcome.error.message),
    ),
  );
});

test("a request's control vector steers its prompt and generation, then is removed", async () => {
  const dirs = new Map([...happy.directions].map(([l, v]) => [l, v.map((x) => x * 2)]));
  const plain = tokensOf(await generate({ maxTokens: 4 }));
  const steered = tokensOf(
    await generate({ maxTokens: 4, controlVector: dirs, reusePrefix: true }),
  );
  assert.notEqual(steered[0]!.probability, plain[0]!.probability, "the prompt itself is steered");
  assert.equal(engine.controlVectorOf(0), null);
  // The next request reuses no KV computed under another vector.
  const after = tokensOf(await generate({ maxTokens: 4, reusePrefix: true }));
  assert.deepEqual(after, plain);
});
