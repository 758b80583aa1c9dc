// The loop's overlap of a step's work with the next decode (docs/decode-loop.md): on an engine
// that decodes on another thread, the statistics, the events and the hooks that cannot change
// the sampling run while the step's tokens decode. What comes out must be what comes out
// without it: the same tokens, probabilities, entropies, hook logs, regions, in the same order.
import { after, test } from "node:test";
import { Worker } from "node:worker_threads";
import assert from "node:assert/strict";
import { openEngine } from "../../src/engine/open.js";
import { EngineError } from "../../src/engine/errors.js";
import { storiesModelPath } from "../../src/paths.js";
import { DecodeLoop, type GenerationRequest } from "../../src/decode/loop.js";
import type { DecodeEvent } from "../../src/decode/events.js";
import { SequenceState } from "../../src/decode/sequence.js";
import { continuationTokens } from "../../src/decode/continuation.js";

const engine = await openEngine(storiesModelPath, {
  device: "cpu",
  sequences: 2,
  contextSize: 1024,
  glassBox: false,
});
after(() => engine.dispose());

const PROMPT = "Once upon a time";

/** A hook that only reads the distribution (and prints what it read, with its step). */
const READING_HOOK = `
int seen = 0;
void watch(int step) {
  int e = vocab_entropy();
  for (int r = 0; r < 3; r++) seen += top_k_token(r) + top_k_prob(r);
  printf("%d %d %d %d %d\\n", step, hook_step(), e, logit_argmax(), vocab_top1_prob());
}
int main() { hook_set("watch", 1000); return 0; }`;

async function run(requests: GenerationRequest[], overlap: boolean): Promise<DecodeEvent[]> {
  const events: DecodeEvent[] = [];
  for await (const ev of new DecodeLoop(engine, { overlap }).run(requests)) events.push(ev);
  return events;
}

/** The events without what is measured in time (a VM run's stats, a decode's, a generation's). */
function timeless(events: DecodeEvent[]): unknown[] {
  return events.map((ev) => {
    switch (ev.type) {
      case "vm":
        return { ...ev, outcome: { ...ev.outcome, stats: undefined } };
      case "injection":
        return { ...ev, decodeMs: undefined };
      case "done":
        return { ...ev, stats: { ...ev.stats, totalMs: undefined, tokensPerSecond: undefined } };
      default:
        return ev;
    }
  });
}

const ofType = <T extends DecodeEvent["type"]>(events: DecodeEvent[], type: T) =>
  events.filter((e): e is Extract<DecodeEvent, { type: T }> => e.type === type);

test("the engine decodes in the background, so the loop overlaps", () => {
  assert.equal(engine.capabilities.backgroundDecode, true);
});

test("a reading hook with statistics: the same events with the overlap on and off", async () => {
  const requests: GenerationRequest[] = [
    {
      seq: 0,
      prompt: PROMPT,
      maxTokens: 24,
      hook: READING_HOOK,
      sampling: { temperature: 0.9, seed: 7 },
      topLogprobs: 3,
    },
    { seq: 1, prompt: "One day", maxTokens: 20, hook: READING_HOOK, topLogprobs: 2 },
  ];
  const on = await run(requests, true);
  const off = await run(requests, false);
  assert.deepEqual(timeless(on), timeless(off));
  // The comparison is of real content: tokens with statistics, and a hook log before each.
  const tokens = ofType(on, "token").filter((e) => e.seq === 0);
  assert.equal(tokens.length, 24);
  for (const t of tokens) {
    assert.ok(t.probability > 0 && t.probability <= 1, `probability ${t.probability}`);
    assert.ok(t.entropy > 0, `entropy ${t.entropy}`);
    assert.equal(t.top?.length, 3);
  }
  const seq0 = on.filter((e) => e.seq === 0 && (e.type === "token" || e.type === "hook-log"));
  for (let i = 0; i < seq0.length; i += 2) {
    const log = seq0[i]!;
    const token = seq0[i + 1]!;
    assert.equal(log.type, "hook-log");
    assert.equal(token.type, "token");
    // The hook saw its own step, before that step's token.
    const [step, hookStep] = (log as { text: string }).text.split(" ").map(Number);
    assert.equal(step, (token as { step: number }).step);
    assert.equal(hookStep, step);
  }
});

test("hooks read the logits as before sampling, whatever the sampler edits in place", async () => {
  // A repetition penalty and a logit bias are applied in the state's buffers for the draw and
  // undone after it: a hook running after the draw must read what it read before.
  const request: GenerationRequest = {
    prompt: PROMPT,
    maxTokens: 24,
    hook: READING_HOOK,
    sampling: {
      temperature: 0.8,
      topK: 20,
      repetitionPenalty: 1.3,
      logitBias: new Map([[13, 2.5]]),
      seed: 3,
    },
    topLogprobs: 4,
  };
  const on = await run([request], true);
  assert.equal(ofType(on, "token").length, 24);
  assert.equal(ofType(on, "hook-log").length, 24);
  assert.deepEqual(timeless(on), timeless(await run([request], false)));
});

test("seeded sampling with the overlap gives the same tokens every run", async () => {
  const request: GenerationRequest = {
    prompt: PROMPT,
    maxTokens: 30,
    sampling: { temperature: 1.2, topP: 0.95, seed: 42 },
    hook: READING_HOOK,
  };
  const ids = async () => ofType(await run([request], true), "token").map((t) => t.id);
  const first = await ids();
  assert.deepEqual(await ids(), first);
  assert.equal(first.length, 30);
  // A different seed draws differently: the comparison above is not of a constant.
  const other = ofType(
    await run([{ ...request, sampling: { ...request.sampling, seed: 43 } }], true),
    "token",
  ).map((t) => t.id);
  assert.notDeepEqual(other, first);
});

test("a hook that writes logits still steers the token of its own step", async () => {
  // One token per character (the tokenizer's own where it has one: no byte-fallback twin).
  const ids = [..." [C: 6*7]"].map((piece) => {
    const natural = continuationTokens(engine, piece);
    if (natural.length === 1) return natural[0]!;
    for (let id = 0; id < engine.capabilities.nVocab; id++)
      if (!engine.isControl(id) && engine.tokenText(id) === piece) return id;
    throw new Error(`no single token for ${JSON.stringify(piece)}`);
  });
  // main() only sets the hook: logit_set is reached from the hook alone.
  const hook = `
int ids[] = {${ids.join(", ")}};
int at = 0;
void force(int step) {
  if (at < ${ids.length}) { logit_set(ids[at], logit_get(logit_argmax()) + 100000); at++; }
  printf("%d\\n", vocab_entropy());
}
int main() { hook_set("force", 1000); return 0; }`;
  const request: GenerationRequest = { prompt: PROMPT, maxTokens: 12, hook, topLogprobs: 2 };
  const on = await run([request], true);
  assert.deepEqual(
    ofType(on, "token")
      .slice(0, ids.length)
      .map((t) => t.id),
    ids,
  );
  const injected = ofType(on, "injection");
  assert.equal(injected.length, 1);
  assert.match(injected[0]!.text, /42/);
  assert.deepEqual(timeless(on), timeless(await run([request], false)));
});

test("token events reach the consumer while their decode runs; stopping early waits for it", async () => {
  let busy = 0;
  let tokens = 0;
  for await (const ev of new DecodeLoop(engine, { overlap: true }).run([
    { prompt: PROMPT, maxTokens: 6 },
  ])) {
    if (ev.type !== "token") continue;
    tokens++;
    assert.throws(
      () => engine.length(0),
      (e: unknown) => e instanceof EngineError && e.code === "busy",
    );
    busy++;
  }
  assert.equal(busy, tokens);
  assert.equal(tokens, 6);
  // Without the overlap the decode waits for the consumer; so it does when a step has no
  // vocabulary-wide work to move (no statistics, no hooks): nothing would be won.
  for await (const ev of new DecodeLoop(engine, { overlap: false }).run([
    { prompt: PROMPT, maxTokens: 3 },
  ]))
    if (ev.type === "token") assert.ok(engine.length(0) > 0);
  for await (const ev of new DecodeLoop(engine, { overlap: true, tokenStats: false }).run([
    { prompt: PROMPT, maxTokens: 3 },
  ]))
    if (ev.type === "token") assert.ok(engine.length(0) > 0);
  // The overlap is off by default (it measured slower on 2-core machines).
  for await (const ev of new DecodeLoop(engine).run([{ prompt: PROMPT, maxTokens: 3 }]))
    if (ev.type === "token") assert.ok(engine.length(0) > 0);
  // A consumer that stops at the first token finds the engine settled right after.
  const prompt = engine.tokenize(PROMPT, { addSpecial: true });
  for await (const ev of new DecodeLoop(engine, { overlap: true }).run([
    { prompt: PROMPT, maxTokens: 6 },
  ]))
    if (ev.type === "token") break;
  assert.equal(engine.length(0), prompt.length + 1);
});

test("only hooks whose session reaches nothing but reads of the logits may run late", () => {
  const sequence = (seq: number) =>
    new SequenceState(engine, {
      seq,
      maxTokens: 1,
      sampling: {},
      stop: [],
      inject: true,
      tokenStats: true,
    });
  const reading = sequence(0);
  assert.equal(reading.hooksSamplingNeutral(), true, "no hooks at all");
  assert.ok(reading.vm.run(READING_HOOK).ok);
  // Not compiled yet: what the hook reaches is unknown until its first call.
  assert.equal(reading.hooksSamplingNeutral(), false);
  reading.openStepLogits(new Float32Array(engine.capabilities.nVocab));
  assert.ok(reading.callHook("watch").ok);
  assert.equal(reading.hooksSamplingNeutral(), true);
  // A region program of the same session that writes the logits makes every hook wait.
  assert.ok(reading.vm.run("int main() { logit_set(3, 0); return 0; }").ok);
  assert.ok(reading.callHook("watch").ok);
  assert.equal(reading.hooksSamplingNeutral(), false);
  reading.finish("eos");

  const rewinding = sequence(1);
  assert.ok(
    rewinding.vm.run(`void back(int s) { if (s > 99) vm_rewind(vm_checkpoint()); }
int main() { hook_set("back", 5); return 0; }`).ok,
  );
  rewinding.openStepLogits(new Float32Array(engine.capabilities.nVocab));
  assert.ok(rewinding.callHook("back").ok);
  assert.equal(rewinding.hooksSamplingNeutral(), false);
  rewinding.finish("eos");
});

test("in a worker thread (as the server runs the loop) the decode overlaps and agrees", async () => {
  const worker = new Worker(new URL("./overlap-worker.js", import.meta.url));
  type Run = { tokens: number[]; inFlight: number };
  const reply = await new Promise<{ on: Run; off: Run }>((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  });
  await worker.terminate();
  assert.equal(reply.on.tokens.length, 12);
  assert.deepEqual(reply.on.tokens, reply.off.tokens);
  assert.equal(reply.on.inFlight, 12);
  assert.equal(reply.off.inFlight, 0);
});
