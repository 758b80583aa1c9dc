// The glass-box engine against the real llama.cpp libraries and the shipped stories260K model:
// text, decoding, logits, rewind, batching, observation and steering.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import type { Token as PeerToken } from "node-llama-cpp";
import { openEngine } from "../../src/engine/open.js";
import { EngineError } from "../../src/engine/errors.js";
import { greedyContinue, loadNodeLlamaModel } from "../../src/engine/node-llama-cpp.js";
import {
  STORY_CONTINUATION,
  STORY_PROMPT,
  argmax,
  greedy,
  maxAbsDiff,
  project,
  readF32Tensor,
  rmsNorm,
  storiesModelPath,
} from "./helpers.js";

const engine = await openEngine(storiesModelPath, {
  device: "cpu",
  sequences: 4,
  contextSize: 1024,
});
after(() => engine.dispose());

function fresh(seq: number): void {
  engine.truncate(seq, 0);
  engine.observe({ hidden: false, attention: false, kv: false, finalNorm: false });
  engine.clearSteering();
}

function promptTokens(): number[] {
  return engine.tokenize(STORY_PROMPT, { addSpecial: true });
}

test("capabilities and metadata describe the model", () => {
  const c = engine.capabilities;
  assert.deepEqual(
    [c.nLayer, c.nHead, c.nHeadKv, c.headDim, c.nEmbd, c.nEmbdKv, c.nVocab],
    [5, 8, 4, 8, 64, 32, 512],
  );
  assert.equal(c.contextSize, 1024);
  assert.equal(c.maxSequences, 4);
  assert.equal(c.backend, "cpu");
  assert.equal(engine.model.architecture, "llama");
  assert.equal(engine.metadata("llama.context_length"), "2048");
  assert.equal(engine.model.trainContextSize, 2048);
  assert.equal(engine.metadata("no.such.key"), undefined);
  assert.equal(engine.model.chatTemplate, undefined);
});

test("greedy output equals node-llama-cpp's for the same model and prompt", async () => {
  fresh(0);
  const prompt = promptTokens();
  assert.equal(prompt[0], engine.special.bos);
  engine.decode([{ seq: 0, tokens: prompt }]);
  const ours = greedy(engine, 0, 32);
  const text = engine.detokenize(ours);
  assert.ok(
    text.startsWith(STORY_CONTINUATION),
    `unexpected continuation: ${JSON.stringify(text)}`,
  );

  const peer = await loadNodeLlamaModel(storiesModelPath, { device: "cpu" });
  try {
    const theirs: number[] = [];
    for await (const step of greedyContinue(peer, STORY_PROMPT, 32)) theirs.push(step.token);
    assert.deepEqual(ours.slice(0, theirs.length), theirs);
    // The tokenizers agree too.
    assert.deepEqual(
      engine.tokenize(STORY_PROMPT),
      peer.model.tokenize(STORY_PROMPT).map((t) => Number(t)),
    );
    assert.equal(engine.detokenize(ours), peer.model.detokenize(ours as PeerToken[]));
  } finally {
    await peer.dispose();
  }
});

test("tokens, text and special tokens", () => {
  const tokens = engine.tokenize("the park");
  // SentencePiece marks the start of a text with a space, which detokenize drops again.
  assert.equal(engine.detokenize(tokens), "the park");
  assert.equal(tokens.map((t) => engine.tokenText(t)).join(""), " the park");
  const { bos, eos } = engine.special;
  assert.equal(bos, 1);
  assert.equal(eos, 2);
  assert.ok(engine.isEndOfGeneration(eos!));
  assert.ok(!engine.isEndOfGeneration(tokens[0]!));
  assert.equal(engine.tokenText(bos!), "");
  assert.equal(engine.tokenText(bos!, { renderSpecial: true }), "<s>");
  assert.equal(engine.tokenize("<s>hi", { parseSpecial: true })[0], bos);
});

test("a conversation is rendered with a named template; a model without one says so", () => {
  const messages = [
    { role: "system", content: "Be brief." },
    { role: "user", content: "Hi" },
  ];
  assert.equal(
    engine.renderChat(messages, { template: "chatml" }),
    "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",
  );
  assert.throws(
    () => engine.renderChat(messages),
    (e: unknown) =>
      e instanceof EngineError && e.code === "chat-template" && /no chat template/.test(e.message),
  );
  assert.throws(
    () => engine.renderChat(messages, { template: "{{ not a known template }}" }),
    /does not parse as Jinja \(Parser Error: .*\) and llama\.cpp does not recognise it/,
  );
  assert.throws(
    () => engine.renderChat(messages, { template: "no-such-template" }),
    /no built-in chat template named "no-such-template"/,
  );
});

test("logits equal result_output captured in the eval callback", () => {
  fresh(0);
  engine.captureNext(["result_output"]);
  engine.decode([{ seq: 0, tokens: promptTokens() }]);
  const captured = engine.captured("result_output")!;
  assert.deepEqual(captured.ne.slice(0, 2), [512, 1]);
  assert.deepEqual(Array.from(engine.logits(0)), Array.from(captured.data));
});

test("the last layer's hidden state, RMS-normed, times the output weights gives the logits", async () => {
  fresh(0);
  engine.observe({ hidden: true, finalNorm: true });
  const prompt = promptTokens();
  engine.decode([{ seq: 0, tokens: prompt }]);
  const last = prompt.length - 1;
  const hidden = engine.hidden(0, 4, last)!;
  const eps = Number(engine.metadata("llama.attention.layer_norm_rms_epsilon"));
  const norm = await readF32Tensor(storiesModelPath, "output_norm.weight");
  const output = await readF32Tensor(storiesModelPath, "output.weight");
  const normed = rmsNorm(hidden, norm.data, eps);
  assert.ok(maxAbsDiff(normed, engine.finalNorm(0, last)!) < 1e-5);
  const logits = project(output.data, 64, normed);
  assert.ok(
    maxAbsDiff(logits, engine.logits(0)) < 1e-4,
    `diff ${maxAbsDiff(logits, engine.logits(0))}`,
  );
  // Every prompt position was recorded (all rows are outputs while hidden is observed).
  for (let p = 0; p <= last; p++) assert.equal(engine.hidden(0, 4, p)?.length, 64);
});

test("attention rows sum to 1, are causal, and weight the recorded V rows into kqv_out", () => {
  fresh(0);
  engine.observe({ attention: true, kv: true });
  const prompt = promptTokens();
  engine.captureNext(["kqv_out-2"]);
  engine.decode([{ seq: 0, tokens: prompt }]);
  const kqvPrompt = engine.captured("kqv_out-2")!;
  engine.captureNext(["kqv_out-2"]);
  const next = argmax(engine.logits(0));
  engine.decode([{ seq: 0, tokens: [next] }]);
  const kqvStep = engine.captured("kqv_out-2")!;
  const { nLayer, nHead, nHeadKv, headDim } = engine.capabilities;
  const n = prompt.length + 1;
  for (let layer = 0; layer < nLayer; layer++)
    for (let h = 0; h < nHead; h++)
      for (let q = 0; q < n; q++) {
        const row = engine.attention(0, layer, h, q)!;
        // Only keys 0..q exist in the row; a total of 1 means nothing went to the future.
        assert.equal(row.length, q + 1);
        const sum = row.reduce((a, b) => a + b, 0);
        assert.ok(Math.abs(sum - 1) < 1e-5, `layer ${layer} head ${h} q ${q}: sum ${sum}`);
      }
  // kqv_out-2 row for query q, head h = Σ_k attention[h][q][k] · V[kv head of h][k].
  const group = nHead / nHeadKv;
  const check = (q: number, kqv: Float32Array, row: number) => {
    for (let h = 0; h < nHead; h++) {
      const att = engine.attention(0, 2, h, q)!;
      for (let d = 0; d < headDim; d++) {
        let s = 0;
        for (let k = 0; k <= q; k++)
          s += att[k]! * engine.kv(0, 2, Math.floor(h / group), k, "v")![d]!;
        const got = kqv[row * nHead * headDim + h * headDim + d]!;
        // The cache holds V in F16; the recorded rows are the F32 values before rounding.
        assert.ok(
          Math.abs(s - got) < 2e-3 * (1 + Math.abs(got)),
          `q ${q} head ${h} dim ${d}: ${s} vs ${got}`,
        );
      }
    }
  };
  for (let q = 0; q < prompt.length; q++) check(q, kqvPrompt.data, q);
  check(prompt.length, kqvStep.data, 0);
  assert.equal(engine.kv(0, 1, 0, 0, "k")?.length, headDim);
});

test("attention maps KV cells to positions across interleaved sequences and rewinds", () => {
  const a = promptTokens();
  const b = engine.tokenize("The cat sat on the mat", { addSpecial: true });
  for (const seq of [0, 1, 2, 3]) fresh(seq);
  engine.observe({ attention: true });
  // Reference: b alone in a clean cache.
  engine.decode([{ seq: 2, tokens: b }]);
  const reference = (q: number) => Array.from(engine.attention(2, 1, 3, q)!);
  const expectedRows = b.map((_, q) => reference(q));
  engine.truncate(2, 0);
  // Interleave: a and b share one batch, then a is rewound and regrown so cells get reused.
  engine.decode([
    { seq: 0, tokens: a },
    { seq: 1, tokens: b.slice(0, 3) },
  ]);
  engine.truncate(0, 2);
  engine.decode([
    { seq: 0, tokens: [a[2]!, a[3]!, a[4]!] },
    { seq: 1, tokens: b.slice(3) },
  ]);
  for (let q = 0; q < b.length; q++) {
    const row = engine.attention(1, 1, 3, q)!;
    assert.equal(row.length, q + 1);
    assert.ok(maxAbsDiff(row, expectedRows[q]!) < 1e-5, `seq 1 q ${q}`);
  }
  for (let q = 0; q < a.length; q++) {
    const sum = engine.attention(0, 4, 0, q)!.reduce((x, y) => x + y, 0);
    assert.ok(Math.abs(sum - 1) < 1e-5, `seq 0 q ${q}: ${sum}`);
  }
});

test("recordings of earlier positions stay readable and exact after later decodes", () => {
  fresh(0);
  fresh(1);
  engine.observe({ hidden: true });
  const prompt = promptTokens();
  engine.decode([{ seq: 0, tokens: prompt }]);
  const early = Float32Array.from(engine.hidden(0, 2, 1)!);
  greedy(engine, 0, 10);
  assert.deepEqual(Array.from(engine.hidden(0, 2, 1)!), Array.from(early));
  assert.equal(engine.hidden(0, 2, engine.length(0)), undefined);
  // Recomputing the same prefix in another sequence, one token at a time, gives the same state.
  for (const t of prompt.slice(0, 2)) engine.decode([{ seq: 1, tokens: [t] }]);
  assert.ok(maxAbsDiff(engine.hidden(1, 2, 1)!, early) < 1e-5);
  assert.ok(engine.observationStats().bytes > 0);
});

test("nothing is recorded while observation is off", () => {
  fresh(2);
  engine.decode([{ seq: 2, tokens: promptTokens() }]);
  assert.equal(engine.hidden(2, 0, 0), undefined);
  assert.equal(engine.attention(2, 0, 0, 0), undefined);
  assert.equal(engine.kv(2, 0, 0, 0, "k"), undefined);
});

test("rewind then regeneration gives bit-identical logits", () => {
  fresh(0);
  engine.observe({ hidden: true });
  const prompt = promptTokens();
  engine.decode([{ seq: 0, tokens: prompt }]);
  const tokens = greedy(engine, 0, 6);
  const original: number[][] = [];
  engine.truncate(0, prompt.length);
  engine.decode([{ seq: 0, tokens: [tokens[0]!] }]);
  // Regenerate token by token (the same decode shapes as the original run).
  for (const t of tokens.slice(1)) {
    original.push(Array.from(engine.logits(0)));
    engine.decode([{ seq: 0, tokens: [t] }]);
  }
  original.push(Array.from(engine.logits(0)));
  engine.truncate(0, prompt.length + 1);
  assert.equal(engine.length(0), prompt.length + 1);
  assert.equal(engine.hidden(0, 0, prompt.length + 1), undefined);
  assert.throws(() => engine.logits(0), /not part of the last decode/);
  for (const [i, t] of tokens.slice(1).entries()) {
    engine.decode([{ seq: 0, tokens: [t] }]);
    assert.deepEqual(Array.from(engine.logits(0)), original[i + 1], `step ${i + 1}`);
  }
  assert.ok(engine.hidden(0, 0, prompt.length + 1));
});

test("two sequences decoded in one batch equal each decoded alone", () => {
  const a = promptTokens();
  const b = engine.tokenize("The cat sat", { addSpecial: true });
  fresh(0);
  fresh(1);
  engine.decode([{ seq: 0, tokens: a }]);
  const aloneA = Array.from(engine.logits(0));
  engine.decode([{ seq: 1, tokens: b }]);
  const aloneB = Array.from(engine.logits(1));
  const stepA = argmax(aloneA);
  const stepB = argmax(aloneB);
  engine.decode([{ seq: 0, tokens: [stepA] }]);
  const aloneA2 = Array.from(engine.logits(0));
  engine.decode([{ seq: 1, tokens: [stepB] }]);
  const aloneB2 = Array.from(engine.logits(1));

  fresh(2);
  fresh(3);
  // A different batch shape makes llama.cpp pick other kernels and summation orders: the
  // difference stays at rounding level (measured 3e-6 for prompts, 2.5e-4 for a single-token
  // step against a two-token batch, on logits of magnitude ~10).
  const close = (x: ArrayLike<number>, y: ArrayLike<number>, what: string) => {
    const d = maxAbsDiff(x, y);
    assert.ok(d < 2e-3, `${what}: max difference ${d}`);
    assert.equal(argmax(x), argmax(y), what);
  };
  engine.decode([
    { seq: 2, tokens: a },
    { seq: 3, tokens: b },
  ]);
  close(engine.logits(2), aloneA, "prompt A");
  close(engine.logits(3), aloneB, "prompt B");
  engine.decode([
    { seq: 2, tokens: [stepA] },
    { seq: 3, tokens: [stepB] },
  ]);
  close(engine.logits(2), aloneA2, "step A");
  close(engine.logits(3), aloneB2, "step B");
});

test("inputs longer than a batch are split into batches, bit-identical to the same calls by hand", async () => {
  const small = await openEngine(storiesModelPath, {
    device: "cpu",
    batchSize: 4,
    contextSize: 256,
  });
  try {
    const prompt = small.tokenize("Once upon a time there was a dog named Max.", {
      addSpecial: true,
    });
    assert.ok(prompt.length > 8);
    small.decode([{ seq: 0, tokens: prompt }]);
    // The engine splits the prefix into full batches and decodes the last token on its own.
    // (Other sequences' cells would change the attention width, so all are cleared.)
    for (const seq of [0, 1, 2, 3]) fresh(seq);
    const prefix = prompt.slice(0, -1);
    for (let i = 0; i < prefix.length; i += 4)
      engine.decode([{ seq: 0, tokens: prefix.slice(i, i + 4) }]);
    engine.decode([{ seq: 0, tokens: prompt.slice(-1) }]);
    assert.deepEqual(Array.from(small.logits(0)), Array.from(engine.logits(0)));
    assert.equal(small.length(0), prompt.length);
  } finally {
    small.dispose();
  }
});

test("steering: writing back unchanged data is bit-identical, an added vector changes the logits", () => {
  const prompt = promptTokens();
  fresh(0);
  engine.decode([{ seq: 0, tokens: prompt }]);
  const plain = Array.from(engine.logits(0));

  fresh(0);
  engine.steer(2, { add: new Float32Array(64) });
  engine.steer(3, { scale: 1 });
  engine.decode([{ seq: 0, tokens: prompt }]);
  assert.deepEqual(Array.from(engine.logits(0)), plain);

  fresh(0);
  const push = new Float32Array(64);
  for (let d = 0; d < 8; d++) push[d] = 3;
  engine.steer(2, { add: push });
  engine.decode([{ seq: 0, tokens: prompt }]);
  const steered = Array.from(engine.logits(0));
  assert.ok(
    maxAbsDiff(steered, plain) > 0.1,
    `steering moved logits by ${maxAbsDiff(steered, plain)}`,
  );

  // One-shot edits are consumed by the decode: the same input again gives the plain logits.
  engine.truncate(0, 0);
  engine.decode([{ seq: 0, tokens: prompt }]);
  assert.deepEqual(Array.from(engine.logits(0)), plain);

  // A scale changes them too (not on the last layer: the final RMS norm undoes a scale there).
  engine.truncate(0, 0);
  engine.steer(3, { scale: 0.5 });
  engine.decode([{ seq: 0, tokens: prompt }]);
  assert.ok(maxAbsDiff(engine.logits(0), plain) > 0.1);
});

test("steering can be limited to one sequence and kept across decodes", () => {
  const prompt = promptTokens();
  fresh(0);
  fresh(1);
  engine.decode([{ seq: 0, tokens: prompt }]);
  const plain = Array.from(engine.logits(0));
  engine.truncate(0, 0);
  const push = new Float32Array(64).fill(1);
  engine.steer(1, { add: push }, { seq: 1, persistent: true });
  engine.decode([
    { seq: 0, tokens: prompt },
    { seq: 1, tokens: prompt },
  ]);
  assert.ok(maxAbsDiff(engine.logits(0), plain) < 1e-5);
  const steered = Array.from(engine.logits(1));
  assert.ok(maxAbsDiff(steered, plain) > 0.1);
  engine.truncate(1, 0);
  engine.decode([{ seq: 1, tokens: prompt }]);
  assert.ok(maxAbsDiff(engine.logits(1), steered) < 1e-5, "persistent edit still applied");
  engine.clearSteering();
  engine.truncate(1, 0);
  engine.decode([{ seq: 1, tokens: prompt }]);
  assert.ok(maxAbsDiff(engine.logits(1), plain) < 1e-5);
});

test("bad calls are clear errors", () => {
  fresh(0);
  const code = (c: string) => (e: unknown) => e instanceof EngineError && e.code === c;
  assert.throws(() => engine.decode([{ seq: 0, tokens: [512] }]), code("argument"));
  assert.throws(() => engine.decode([{ seq: 9, tokens: [1] }]), /sequence 9 out of range 0..3/);
  assert.throws(() => engine.decode([{ seq: 0, tokens: [] }]), /no tokens/);
  assert.throws(() => engine.truncate(0, 5), /it has 0 positions/);
  assert.throws(() => engine.detokenize([5, 99999]), /token 99999 out of range 0..511/);
  assert.throws(() => engine.isControl(-1), /token -1 out of range/);
  assert.throws(() => engine.tokenText(512), /token 512 out of range/);
  assert.throws(() => engine.hidden(0, 5, 0), /layer 5 out of range 0..4/);
  assert.throws(
    () => engine.steer(0, { add: new Float32Array(3) }),
    /3 values, the model's hidden size is 64/,
  );
  assert.throws(
    () => engine.decode([{ seq: 0, tokens: new Array(2000).fill(1) }]),
    code("context-full"),
  );
  assert.equal(engine.length(0), 0);
});

test("an engine without the glass box decodes identically and refuses observation", async () => {
  const plain = await openEngine(storiesModelPath, { device: "cpu", glassBox: false });
  try {
    assert.equal(plain.capabilities.reads.hidden, false);
    const prompt = plain.tokenize(STORY_PROMPT, { addSpecial: true });
    plain.decode([{ seq: 0, tokens: prompt }]);
    fresh(0);
    engine.decode([{ seq: 0, tokens: prompt }]);
    assert.deepEqual(Array.from(plain.logits(0)), Array.from(engine.logits(0)));
    assert.throws(() => plain.observe({ hidden: true }), /glassBox: false/);
  } finally {
    plain.dispose();
  }
  assert.throws(() => plain.tokenize("x"), /disposed/);
});

test("flash attention changes the arithmetic but not the greedy story; under the glass box it stays off", async () => {
  const flash = await openEngine(storiesModelPath, {
    device: "cpu",
    glassBox: false,
    flashAttention: true,
  });
  const glassFlash = await openEngine(storiesModelPath, { device: "cpu", flashAttention: true });
  /** The prompt's logits and the next 48 greedy tokens. */
  const story = (e: typeof engine) => {
    e.decode([{ seq: 0, tokens: promptTokens() }]);
    const first = Array.from(e.logits(0));
    const tokens: number[] = [];
    for (let i = 0; i < 48; i++) {
      const logits = e.logits(0);
      let best = 0;
      for (let t = 1; t < logits.length; t++) if (logits[t]! > logits[best]!) best = t;
      tokens.push(best);
      e.decode([{ seq: 0, tokens: [best] }]);
    }
    return { first, tokens };
  };
  try {
    fresh(0);
    const reference = story(engine);
    const flashed = story(flash);
    // Not the plain path's bits (an engine without the glass box and without flash attention
    // gives exactly those, test above), close to them, and the same greedy tokens.
    assert.notDeepEqual(flashed.first, reference.first);
    const worst = Math.max(...flashed.first.map((x, i) => Math.abs(x - reference.first[i]!)));
    assert.ok(worst < 0.05, `largest logit difference ${worst}`);
    assert.deepEqual(flashed.tokens, reference.tokens);
    // The glass box needs the attention probabilities as a tensor: flash attention is ignored.
    assert.equal(glassFlash.capabilities.reads.attention, true);
    assert.deepEqual(story(glassFlash), reference);
  } finally {
    flash.dispose();
    glassFlash.dispose();
  }
});

test("an exception inside the eval callback never crosses into C and is reported after the decode", () => {
  // No real input makes the callback throw, so a fault is injected into the recorder.
  const tap = (engine as unknown as { tap: { recordRows: (...args: unknown[]) => void } }).tap;
  const original = tap.recordRows;
  const prompt = promptTokens();
  fresh(0);
  engine.decode([{ seq: 0, tokens: prompt }]);
  const expected = Array.from(engine.logits(0));
  fresh(0);
  engine.observe({ hidden: true });
  tap.recordRows = () => {
    throw new Error("injected fault");
  };
  try {
    assert.throws(
      () => engine.decode([{ seq: 0, tokens: prompt }]),
      (e: unknown) =>
        e instanceof EngineError && e.code === "observer" && /injected fault/.test(e.message),
    );
  } finally {
    tap.recordRows = original;
  }
  // The graph ran to the end: the logits and the sequence length are those of a normal decode.
  assert.equal(engine.length(0), prompt.length);
  assert.ok(maxAbsDiff(engine.logits(0), expected) < 1e-4);
  engine.decode([{ seq: 0, tokens: [argmax(engine.logits(0))] }]);
  assert.ok(engine.hidden(0, 4, prompt.length));
});

test("recordings stop at the memory budget instead of growing without bound", async () => {
  const small = await openEngine(storiesModelPath, {
    device: "cpu",
    contextSize: 256,
    observeBudgetBytes: 20_000,
  });
  try {
    small.observe({ hidden: true, attention: true });
    const prompt = small.tokenize(STORY_PROMPT, { addSpecial: true });
    small.decode([{ seq: 0, tokens: prompt }]);
    greedy(small, 0, 40);
    const stats = small.observationStats();
    assert.ok(stats.budgetExceeded);
    assert.ok(stats.bytes <= 20_000, `${stats.bytes} bytes held`);
    // Early positions were recorded; later ones are simply absent.
    assert.equal(small.hidden(0, 0, 0)?.length, 64);
    assert.equal(small.attention(0, 4, 7, small.length(0) - 1), undefined);
  } finally {
    small.dispose();
  }
});
