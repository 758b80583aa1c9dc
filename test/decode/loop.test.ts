// The in-band decode loop on the real engine and the shipped stories260K model. The small model
// never writes code by itself, so hooks force tokens with logit_set: a real way to make it write a
// region, split into exactly the pieces a test wants.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { openEngine } from "../../src/engine/open.js";
import { storiesModelPath } from "../../src/paths.js";
import { DecodeLoop, type GenerationRequest } from "../../src/decode/loop.js";
import type { DecodeEvent } from "../../src/decode/events.js";
import { entropyNats, softmax, sortedIds } from "./reference.js";
import { createLiveVm } from "../../src/decode/sequence.js";
import { continuationTokens } from "../../src/decode/continuation.js";
import { ensureRandomModel } from "../../src/nano/random-model.js";
import { finalText, forcedRun, tokenIds } from "./forcing.js";

const engine = await openEngine(storiesModelPath, {
  device: "cpu",
  sequences: 2,
  contextSize: 1024,
});
after(() => engine.dispose());

const PROMPT = "Once upon a time";

/** Token id whose text is exactly `piece` (the forcing hook writes text in exactly these pieces). */
const pieceIds = new Map<string, number>();
for (let id = 0; id < engine.capabilities.nVocab; id++) {
  if (engine.isControl(id)) continue;
  const t = engine.tokenText(id);
  if (!pieceIds.has(t)) pieceIds.set(t, id);
}
function idOf(piece: string): number {
  // Prefer the token the tokenizer itself uses for the piece (not a byte-fallback twin).
  const natural = continuationTokens(engine, piece);
  if (natural.length === 1) return natural[0]!;
  const id = pieceIds.get(piece);
  if (id === undefined) throw new Error(`no single token for ${JSON.stringify(piece)}`);
  return id;
}

/** A C hook program that makes the model write `pieces`, one token each, from the first step. */
function forcing(pieces: string[], extra = ""): string {
  const ids = pieces.map(idOf);
  return `
int forced_ids[] = {${ids.join(", ")}};
int forced_n = ${ids.length};
int forced_at = 0;
void force(int step) {
  if (forced_at >= forced_n) return;
  logit_set(forced_ids[forced_at], logit_get(logit_argmax()) + 100000);
  forced_at++;
}
${extra}
int main() { hook_set("force", forced_n); return 0; }`;
}

async function collect(requests: GenerationRequest[]): Promise<DecodeEvent[]> {
  const events: DecodeEvent[] = [];
  for await (const ev of new DecodeLoop(engine).run(requests)) events.push(ev);
  return events;
}

function doneText(events: DecodeEvent[], seq = 0): string {
  const done = events.find((e) => e.type === "done" && e.seq === seq);
  assert.ok(done && done.type === "done");
  return done.text;
}

function chars(text: string): string[] {
  return [...text];
}

test("a forced [C: …] region runs and its result is injected into the text and the KV cache", async () => {
  const events = await collect([
    { prompt: PROMPT, maxTokens: 20, hook: forcing(chars(" [C: 6*7]")) },
  ]);
  const text = doneText(events);
  assert.ok(text.startsWith(" [C: 6*7] = VM[42]"), JSON.stringify(text));
  const vm = events.find((e) => e.type === "vm" && e.origin === "region");
  assert.ok(vm && vm.type === "vm" && vm.outcome.ok && vm.outcome.text === "42");
  const inj = events.find((e) => e.type === "injection");
  assert.ok(inj && inj.type === "injection");
  assert.equal(inj.text, " = VM[42]");
  assert.equal(engine.detokenize(inj.tokens), " = VM[42]".trimStart());
  // The model conditions on the result: the tokens are in the sequence after the region.
  const injectedText = inj.tokens.map((t) => engine.tokenText(t)).join("");
  assert.equal(injectedText, " = VM[42]");
});

test("context_token reads the injected tokens back from the sequence", async () => {
  // A second region reads the context: the tokens of the first injection must be there.
  // find4() is defined by the setup program; the second region calls it by name.
  const find4 =
    "int find4() { int n = context_len(); char b[32]; int i; for (i = 0; i < n; i++) { tok_str(context_token(i), b); if (b[0] == '4') break; } return i; }";
  const forcedPieces = [...chars(" [C: 6*7]"), ...chars(" [C: find4()]")];
  const events = await collect([
    { prompt: PROMPT, maxTokens: 40, hook: forcing(forcedPieces, find4) },
  ]);
  const results = events.filter((e) => e.type === "vm" && e.origin === "region");
  assert.equal(results.length, 2);
  const second = results[1]!;
  assert.ok(second.type === "vm" && second.outcome.ok, JSON.stringify(second));
  const pos = Number(second.outcome.text);
  const inj = events.find((e) => e.type === "injection");
  assert.ok(inj && inj.type === "injection");
  // The '4' of "VM[42]" sits right where the injection was evaluated: after the prompt and the
  // nine forced tokens of the first region.
  const promptLength = engine.tokenize(PROMPT, { addSpecial: true }).length;
  assert.equal(pos, promptLength + 9 + inj.tokens.indexOf(idOf("4")));
});

test("prompt text never triggers the VM, however many regions it holds", async () => {
  const prompt =
    "Q: [C: 1+1] = VM[2]\n```c\nint main(){return 3;}\n```\n[CALC: 7*6] and [LISP: (+ 1 2)]";
  const events = await collect([{ prompt, maxTokens: 12 }]);
  assert.equal(events.filter((e) => e.type === "vm").length, 0);
  assert.equal(events.filter((e) => e.type === "region-start").length, 0);
});

test("regions split across tokens in different ways give the same result", async () => {
  // The 32,000-token vocabulary has " [" and "];" as single tokens, so the splits really differ.
  const big = await openEngine(await ensureRandomModel({ vocab: 32000 }), {
    device: "cpu",
    contextSize: 256,
  });
  try {
    const vocab = tokenIds(big);
    const splits = [
      chars(" [C: 6*7]"), // a character per token
      [" [", "C", ":", " ", "6", "*", "7", "]"], // the opening in one token
      [" [", "C", ":", " ", "6", "*", "7", "];"], // the last token runs past the region's end
    ];
    for (const pieces of splits) {
      const events = await forcedRun(big, pieces, vocab);
      // The model wrote exactly this split (the last token cut at the region's end).
      const written = events.filter((e) => e.type === "token").map((e) => e.text);
      assert.deepEqual(written.slice(0, pieces.length), [...pieces.slice(0, -1), "]"]);
      assert.match(finalText(events), /^ \[C: 6\*7\] = VM\[42\]/);
    }
  } finally {
    big.dispose();
  }
});

test("nested brackets and ] inside a string literal stay inside the region", async () => {
  const src = ` [C: int a[3] = {4, 5, 6}; char *s = "]"; return a[1] + s[0];]`;
  const events = await collect([
    { prompt: PROMPT, maxTokens: src.length + 3, hook: forcing(chars(src)) },
  ]);
  const vm = events.find((e) => e.type === "vm" && e.origin === "region");
  assert.ok(vm && vm.type === "vm" && vm.outcome.ok, JSON.stringify(vm));
  assert.equal(vm.outcome.text, String(5 + "]".charCodeAt(0)));
});

test("a ```c fence runs and its output is injected as an output block", async () => {
  const src = ' ```c\nint main() { printf("%d", 5050); return 0; }\n```';
  const events = await collect([
    { prompt: PROMPT, maxTokens: src.length + 3, hook: forcing(chars(src)) },
  ]);
  const inj = events.find((e) => e.type === "injection");
  assert.ok(inj && inj.type === "injection");
  assert.match(inj.text, /```output\n5050\n```/);
  assert.match(doneText(events), /```output\n5050\n```/);
});

test("[CALC: …] and [LISP: …] regions run in their own languages", async () => {
  const src = " [CALC: 2 + 3 * 4] [LISP: (+ 2 (* 3 4))]";
  const events = await collect([
    { prompt: PROMPT, maxTokens: src.length + 3, hook: forcing(chars(src)) },
  ]);
  const results = events.filter((e) => e.type === "vm" && e.origin === "region");
  assert.deepEqual(
    results.map((e) => e.type === "vm" && e.language),
    ["calc", "lisp"],
  );
  assert.match(doneText(events), /\[CALC: 2 \+ 3 \* 4\] = VM\[14\]/);
  assert.match(doneText(events), /\[LISP: \(\+ 2 \(\* 3 4\)\)\] = VM\[14\]/);
});

test("a VM error is injected with its position and decoding continues", async () => {
  const src = " [C: int z = 0; return 1 / z;]";
  const events = await collect([
    { prompt: PROMPT, maxTokens: src.length + 6, hook: forcing(chars(src)) },
  ]);
  const inj = events.find((e) => e.type === "injection");
  assert.ok(inj && inj.type === "injection");
  assert.match(inj.text, /^ = VM\[error: division by zero at 1:\d+\]$/);
  const after = events.filter((e) => e.type === "token").length;
  assert.ok(after > src.length, "decoding continued after the error");
});

test("intrinsics read the live distribution exactly as computed from the full logits", async () => {
  // Reference: the logits after the prompt, read straight from the engine on sequence 1.
  engine.truncate(1, 0);
  const prompt = engine.tokenize(PROMPT, { addSpecial: true });
  engine.decode([{ seq: 1, tokens: prompt }]);
  const ref = Float32Array.from(engine.logits(1));
  engine.truncate(1, 0);
  const ids = sortedIds(ref).slice(0, 5);
  const probs = ids.map((id) => softmax(ref)[id]!);
  let argmax = 0;
  for (let i = 1; i < ref.length; i++) if (ref[i]! > ref[argmax]!) argmax = i;

  const hook = `
void probe(int step) {
  printf("%d %d %d %d\\n", logit_get(7), logit_get(${argmax}), logit_argmax(), vocab_entropy());
  printf("%d %d %d %d\\n", top_k_token(0), top_k_token(1), top_k_token(4), top_k_prob(0));
  printf("%d %d %d\\n", top_k_prob(1), vocab_top1_prob(), tok_count());
  printf("%d %d %d %d\\n", context_len(), context_token(0), context_token(1), kv_seq_len());
  printf("%d %d %d\\n", kv_layers(), kv_heads(), kv_head_dim());
}
int main() { hook_set("probe", 1); return 0; }`;
  const events = await collect([{ prompt: PROMPT, maxTokens: 2, hook }]);
  const log = events.find((e) => e.type === "hook-log" && e.hook === "probe");
  assert.ok(
    log && log.type === "hook-log",
    JSON.stringify(events.filter((e) => e.type !== "token")),
  );
  const rows = log.text
    .trim()
    .split("\n")
    .map((l) => l.split(" ").map(Number));
  const m = (x: number) => Math.round(x * 1000);
  assert.deepEqual(rows[0], [m(ref[7]!), m(ref[argmax]!), argmax, m(entropyNats(ref))]);
  assert.deepEqual(rows[1], [ids[0], ids[1], ids[4], Math.round(probs[0]! * 10000)]);
  assert.deepEqual(rows[2], [Math.round(probs[1]! * 10000), Math.round(probs[0]! * 10000), 512]);
  assert.deepEqual(rows[3], [prompt.length, prompt[0], prompt[1], prompt.length]);
  assert.deepEqual(rows[4], [5, 4, 8]);
});

test("suppressing the top token from a hook changes the greedy text", async () => {
  const plain = doneText(await collect([{ prompt: PROMPT, maxTokens: 8 }]));
  const hook = `
void suppress(int step) { logit_set(logit_argmax(), -100000); }
int main() { hook_set("suppress", 1); return 0; }`;
  const events = await collect([{ prompt: PROMPT, maxTokens: 8, hook }]);
  const first = events.find((e) => e.type === "token");
  assert.ok(first && first.type === "token");
  assert.notEqual(doneText(events), plain);
  // The chosen token is the reference's second choice.
  engine.truncate(1, 0);
  engine.decode([{ seq: 1, tokens: engine.tokenize(PROMPT, { addSpecial: true }) }]);
  const ids = sortedIds(engine.logits(1)).slice(0, 2);
  engine.truncate(1, 0);
  assert.equal(first.id, ids[1]);
});

test("a region program's logit edits apply at the first sampling step after its result", async () => {
  // Same region text twice; the second time the program suppresses the token that the first run
  // wrote right after the injected result.
  const src = " [C: if (target >= 0) logit_set(target, -100000); return 2;]";
  const run = (target: number) =>
    collect([
      {
        prompt: PROMPT,
        maxTokens: src.length + 2,
        hook: forcing(chars(src), `int target = ${target};`),
      },
    ]);
  const after = (evs: DecodeEvent[]) => {
    const idx = evs.findIndex((e) => e.type === "injection");
    assert.ok(idx >= 0);
    const tok = evs.slice(idx).find((e) => e.type === "token");
    assert.ok(tok && tok.type === "token");
    return tok.id;
  };
  const base = await run(-1);
  const first = after(base);
  const edited = await run(first);
  assert.match(doneText(edited), /VM\[2\]/);
  assert.notEqual(after(edited), first);
});

test("snapshot and restore return the logits exactly; diff measures the change", async () => {
  const hook = `
void snap(int step) {
  int before = logit_get(logit_argmax());
  logit_snapshot(3);
  logit_temperature(2000);
  float d = logit_diff(3);
  int during = logit_get(logit_argmax());
  logit_restore(3);
  float d2 = logit_diff(3);
  printf("%d %d %d %d", before, during, d > 0, d2 == 0);
}
int main() { hook_set("snap", 1); return 0; }`;
  const events = await collect([{ prompt: PROMPT, maxTokens: 2, hook }]);
  const log = events.find((e) => e.type === "hook-log");
  assert.ok(log && log.type === "hook-log");
  const [before, during, changed, zero] = log.text.split(" ").map(Number);
  assert.ok(Math.abs(during! - before! / 2) <= 1, `${during} vs ${before! / 2}`);
  assert.equal(changed, 1);
  assert.equal(zero, 1);
  // Restored exactly: the greedy text equals the plain run.
  const plain = doneText(await collect([{ prompt: PROMPT, maxTokens: 2 }]));
  assert.equal(doneText(events), plain);
});

test("a generation starts with no snapshots, even after one that left some", async () => {
  // The loop reuses the logit buffers of finished sequences: what one generation saved must not
  // be there for the next one to restore.
  const saving = `void save(int step) { logit_snapshot(5); }
int main() { hook_set("save", 1); return 0; }`;
  await collect([{ prompt: PROMPT, maxTokens: 2, hook: saving }]);
  const restoring = `void load(int step) { logit_restore(5); }
int main() { hook_set("load", 1); return 0; }`;
  const events = await collect([{ prompt: PROMPT, maxTokens: 2, hook: restoring }]);
  const failed = events.find((e) => e.type === "hook-error");
  assert.ok(failed && failed.type === "hook-error", "restoring an empty slot fails");
  assert.match(failed.message, /snapshot slot 5 is empty/);
  // And a reused buffer gives the same greedy text, entropies and probabilities as a fresh one.
  const first = await collect([{ prompt: PROMPT, maxTokens: 6 }]);
  const again = await collect([{ prompt: PROMPT, maxTokens: 6 }]);
  const tokens = (evs: DecodeEvent[]) =>
    evs.flatMap((e) => (e.type === "token" ? [[e.id, e.probability, e.entropy]] : []));
  assert.deepEqual(tokens(again), tokens(first));
});

test("hooks run exactly n times and their output never enters the text", async () => {
  const hook = `
int calls = 0;
void tick(int step) { calls++; printf("tick %d\\n", step); }
int main() { hook_set("tick", 5); return 0; }`;
  const events = await collect([{ prompt: PROMPT, maxTokens: 12, hook }]);
  const logs = events.filter((e) => e.type === "hook-log" && e.hook === "tick");
  assert.equal(logs.length, 5);
  assert.deepEqual(
    logs.map((e) => e.type === "hook-log" && e.step),
    [0, 1, 2, 3, 4],
  );
  assert.doesNotMatch(doneText(events), /tick/);
  const plain = doneText(await collect([{ prompt: PROMPT, maxTokens: 12 }]));
  assert.equal(doneText(events), plain);
});

test("a hook removed by another hook is not called again, and one it sets starts at the next step", async () => {
  const hook = `
void second(int step) { printf("second %d\\n", step); }
void third(int step) { printf("third %d\\n", step); }
void first(int step) {
  if (step == 2) { hook_set("second", 0); hook_set("third", 2); }
}
int main() { hook_set("first", 10); hook_set("second", 10); return 0; }`;
  const events = await collect([{ prompt: PROMPT, maxTokens: 8, hook }]);
  const steps = (name: string) =>
    events.flatMap((e) => (e.type === "hook-log" && e.hook === name ? [e.step] : []));
  // Removed at step 2 before its turn: it ran at steps 0 and 1 only.
  assert.deepEqual(steps("second"), [0, 1]);
  // Set during step 2, after the step's hooks were listed: steps 3 and 4.
  assert.deepEqual(steps("third"), [3, 4]);
});

test("a failing hook is removed with an error event and generation goes on", async () => {
  const hook = `
void bad(int step) { int z = step - step; printf("%d", 10 / z); }
int main() { hook_set("bad", 50); return 0; }`;
  const events = await collect([{ prompt: PROMPT, maxTokens: 10, hook }]);
  const errors = events.filter((e) => e.type === "hook-error");
  assert.equal(errors.length, 1);
  assert.ok(errors[0]!.type === "hook-error");
  assert.match(errors[0]!.message, /division by zero/);
  assert.equal(events.filter((e) => e.type === "token").length, 10);
});

test("rewind erases the timeline, greedy regeneration is identical, memo and memory[] survive", async () => {
  const hook = `
int cp;
void watch(int step) {
  if (step == 6 && vm_rewind_len() == 0) {
    memory[0] = 1234;
    vm_rewind_memo("too early");
    vm_rewind(cp);
  }
  if (vm_rewind_len() > 0 && step == 7) {
    char m[32]; int n = vm_rewind_len(); int i;
    for (i = 0; i < n; i++) m[i] = vm_rewind_read(i);
    m[n] = 0;
    printf("memo=%s memory=%d", m, memory[0]);
  }
}
int main() { cp = vm_checkpoint(); hook_set("watch", 100); return 0; }`;
  const events = await collect([{ prompt: PROMPT, maxTokens: 16, hook }]);
  const rewind = events.find((e) => e.type === "rewind");
  assert.ok(rewind && rewind.type === "rewind");
  assert.equal(rewind.memo, "too early");
  const plain = doneText(await collect([{ prompt: PROMPT, maxTokens: 10 }]));
  assert.ok(
    plain.startsWith(rewind.erased),
    `${JSON.stringify(rewind.erased)} vs ${JSON.stringify(plain)}`,
  );
  assert.equal(rewind.erased.length > 0, true);
  const final = doneText(events);
  // Regenerated greedily from the checkpoint: the same text as a run that never rewound.
  assert.ok(
    plain.startsWith(final.slice(0, plain.length)) ||
      final.startsWith(plain.slice(0, final.length)),
  );
  const log = events.find((e) => e.type === "hook-log" && /memo=/.test(e.text));
  assert.ok(log && log.type === "hook-log");
  assert.equal(log.text, "memo=too early memory=1234");
});

test("two sequences in one batch keep separate VM state", async () => {
  const a = forcing(chars(" [C: x * 2]"), "int x = 21;");
  const b = forcing(chars(" [C: x * 2]"), "int x = 50;");
  const events = await collect([
    { seq: 0, prompt: PROMPT, maxTokens: 14, hook: a },
    { seq: 1, prompt: PROMPT, maxTokens: 14, hook: b },
  ]);
  assert.match(doneText(events, 0), /VM\[42\]/);
  assert.match(doneText(events, 1), /VM\[100\]/);
});

test("two sequences decoded together give the same text as each alone", async () => {
  const together = await collect([
    { seq: 0, prompt: PROMPT, maxTokens: 16 },
    { seq: 1, prompt: "One day", maxTokens: 16 },
  ]);
  const alone0 = await collect([{ seq: 0, prompt: PROMPT, maxTokens: 16 }]);
  const alone1 = await collect([{ seq: 1, prompt: "One day", maxTokens: 16 }]);
  assert.equal(doneText(together, 0), doneText(alone0, 0));
  assert.equal(doneText(together, 1), doneText(alone1, 1));
});

test("a live VM session keeps definitions across generations", async () => {
  const live = createLiveVm(engine, 0);
  await collect([
    { prompt: PROMPT, maxTokens: 14, live, hook: forcing(chars(" [C: 6*7]"), "int saved = 9;") },
  ]);
  const events = await collect([
    { prompt: PROMPT, maxTokens: 14, live, hook: forcing(chars(" [C: saved]")) },
  ]);
  assert.match(doneText(events), /VM\[9\]/);
});

test("with injection off, regions are reported but nothing runs", async () => {
  const events = await collect([
    { prompt: PROMPT, maxTokens: 12, inject: false, hook: forcing(chars(" [C: 6*7]")) },
  ]);
  assert.equal(events.filter((e) => e.type === "region-end").length, 1);
  assert.equal(events.filter((e) => e.type === "vm" && e.origin === "region").length, 0);
  assert.equal(events.filter((e) => e.type === "injection").length, 0);
});

test("32,000-token vocabulary: a token that runs past ']' is cut and the region still runs", async () => {
  const big = await openEngine(await ensureRandomModel({ vocab: 32000 }), {
    device: "cpu",
    contextSize: 256,
  });
  try {
    // " [" and "];" are single tokens of this vocabulary (as of Llama 2's); "];" carries text past
    // the region.
    const pieces = [
      " [",
      "C",
      ":",
      " ",
      "6",
      "*",
      "7",
      "];",
      " ```",
      "c",
      "\n",
      "int",
      " main",
      "()",
      " {",
      " return",
      " ",
      "5",
      ";",
      " }",
      "\n",
      "```",
    ];
    const events = await forcedRun(big, pieces);
    const done = events.find((e) => e.type === "done");
    assert.ok(done && done.type === "done");
    assert.ok(done.text.startsWith(" [C: 6*7] = VM[42]"), JSON.stringify(done.text));
    assert.doesNotMatch(done.text, /\];/);
    const cut = events.find((e) => e.type === "token" && e.text === "]");
    assert.ok(cut, "the token was cut at the region's end");
    const injections = events.filter((e) => e.type === "injection");
    assert.equal(injections.length, 2);
    assert.match(done.text, /```output\n5\n```/);
  } finally {
    big.dispose();
  }
});

test("a model that writes ' = VM[' itself after an injected result does not duplicate it", async () => {
  const src = " [C: 6*7] = VM[";
  const events = await collect([
    { prompt: PROMPT, maxTokens: src.length + 4, hook: forcing(chars(src)) },
  ]);
  const text = doneText(events);
  assert.ok(text.startsWith(" [C: 6*7] = VM[42]"), JSON.stringify(text));
  assert.equal(text.split("VM[").length - 1, 1, JSON.stringify(text));
});

/** Logits after the prompt, read straight from the engine on sequence 1 (the reference). */
function referenceLogits(observe = false): Float32Array {
  engine.truncate(1, 0);
  if (observe) engine.observe({ hidden: true, attention: true, kv: true });
  engine.decode([{ seq: 1, tokens: engine.tokenize(PROMPT, { addSpecial: true }) }]);
  return Float32Array.from(engine.logits(1));
}

function hookLog(events: DecodeEvent[], hook: string): string {
  const log = events.find((e) => e.type === "hook-log" && e.hook === hook);
  assert.ok(
    log && log.type === "hook-log",
    JSON.stringify(events.filter((e) => e.type !== "token")),
  );
  return log.text;
}

test("temperature, mask_below and top_p reshape the distribution as the reference does", async () => {
  const ref = referenceLogits();
  const maxLogit = Math.max(...ref);
  const threshold = Math.round((maxLogit - 3) * 1000);
  const hook = `
int alive() { int n = 0; for (int i = 0; i < tok_count(); i++) if (logit_get(i) > -10000000) n++; return n; }
void probe(int step) {
  logit_snapshot(0);
  logit_temperature(2000);
  printf("%d %d\\n", top_k_prob(0), vocab_entropy());
  logit_restore(0);
  logit_mask_below(${threshold});
  printf("%d\\n", alive());
  logit_restore(0);
  logit_top_p(9000);
  printf("%d\\n", alive());
}
int main() { hook_set("probe", 1); return 0; }`;
  const rows = hookLog(await collect([{ prompt: PROMPT, maxTokens: 1, hook }]), "probe")
    .trim()
    .split("\n");
  // Temperature 2: logits halved.
  const half = Float32Array.from(ref, (x) => x / 2);
  const p = softmax(half);
  const top = Math.max(...p);
  const [topProb, ent] = rows[0]!.split(" ").map(Number);
  assert.equal(topProb, Math.round(top * 10000));
  assert.ok(Math.abs(ent! - Math.round(entropyNats(half) * 1000)) <= 1);
  // mask_below keeps exactly the logits at or above the threshold (masked ones sit at -10000).
  const above = ref.filter((x) => x >= threshold / 1000).length;
  const masked = Number(rows[1]);
  assert.equal(masked, ref.length - (ref.length - above));
  // top_p 0.9 keeps the smallest most-likely set whose mass reaches 0.9.
  const probs = [...softmax(ref)].sort((a, b) => b - a);
  let mass = 0;
  let keep = 0;
  while (mass < 0.9) mass += probs[keep++]!;
  assert.equal(Number(rows[2]), keep);
});

test("glass-box reads equal the engine's recorded activations", async () => {
  referenceLogits(true);
  const caps = engine.capabilities;
  const layer = caps.nLayer - 1;
  const h2 = engine.hidden(1, 2, 2)!;
  const h3 = engine.hidden(1, 2, 3)!;
  const k = engine.kv(1, 1, 2, 3, "k")!;
  const v = engine.kv(1, 1, 2, 3, "v")!;
  const att = engine.attention(1, layer, 5, 3)!;
  const hook = `
void probe(int step) {
  printf("%.6f %.6f %.6f\\n", emb_read(2, 2, 0), emb_read(2, 3, 17), emb_read(2, 2, 63));
  printf("%.6f %.6f\\n", kv_read(1, 2, 3, 1, 5), kv_read(1, 2, 3, 0, 7));
  printf("%.6f %.6f\\n", cosine_sim(2, 2, 3), emb_variance(2, 2));
  float row[6];
  attn_score(${layer}, 5, 3, row, 6);
  printf("%.6f %.6f %.6f %.6f %.6f %.6f\\n", row[0], row[1], row[2], row[3], row[4], row[5]);
}
int main() { hook_set("probe", 1); return 0; }`;
  const rows = hookLog(await collect([{ prompt: PROMPT, maxTokens: 1, hook }]), "probe")
    .trim()
    .split("\n")
    .map((r) => r.split(" ").map(Number));
  const near = (a: number, b: number) => assert.ok(Math.abs(a - b) < 2e-5, `${a} vs ${b}`);
  near(rows[0]![0]!, h2[0]!);
  near(rows[0]![1]!, h3[17]!);
  near(rows[0]![2]!, h2[63]!);
  near(rows[1]![0]!, k[5]!);
  near(rows[1]![1]!, v[7]!);
  let dot = 0;
  let n2 = 0;
  let n3 = 0;
  for (let i = 0; i < h2.length; i++) {
    dot += h2[i]! * h3[i]!;
    n2 += h2[i]! ** 2;
    n3 += h3[i]! ** 2;
  }
  near(rows[2]![0]!, dot / Math.sqrt(n2 * n3));
  const mean = h2.reduce((a, b) => a + b, 0) / h2.length;
  near(rows[2]![1]!, h2.reduce((a, b) => a + (b - mean) ** 2, 0) / h2.length);
  // Attention of query 3 over keys 0..3 sums to 1; keys 4 and 5 are in the future.
  for (let i = 0; i < 4; i++) near(rows[3]![i]!, att[i]!);
  near(rows[3]![0]! + rows[3]![1]! + rows[3]![2]! + rows[3]![3]!, 1);
  assert.deepEqual(rows[3]!.slice(4), [0, 0]);
  engine.truncate(1, 0);
});

test("act_add steers the next forward pass; a zero delta changes nothing", async () => {
  const steer = (delta: number) => `
void steer(int step) {
  if (step == 0) for (int d = 0; d < 8; d++) act_add(2, d, ${delta});
  if (step == 1) printf("%d", logit_get(logit_argmax()));
}
int main() { hook_set("steer", 2); return 0; }`;
  const plain = hookLog(await collect([{ prompt: PROMPT, maxTokens: 2, hook: steer(0) }]), "steer");
  const steered = hookLog(
    await collect([{ prompt: PROMPT, maxTokens: 2, hook: steer(3000) }]),
    "steer",
  );
  const zero = hookLog(await collect([{ prompt: PROMPT, maxTokens: 2, hook: steer(0) }]), "steer");
  assert.notEqual(steered, plain);
  assert.equal(zero, plain);
});

test("an intrinsic asked for something out of range fails with a message naming it", async () => {
  const hook = `
void probe(int step) { printf("%d", top_k_token(1000)); }
int main() { hook_set("probe", 1); return 0; }`;
  const events = await collect([{ prompt: PROMPT, maxTokens: 2, hook }]);
  const err = events.find((e) => e.type === "hook-error");
  assert.ok(err && err.type === "hook-error");
  assert.match(err.message, /top-k rank 1000 is outside 0\.\.63/);
});

test("a glass-box read with observation off is an error naming what was not recorded", async () => {
  const hook = `
void probe(int step) { printf("%f", emb_read(1, 0, 0)); }
int main() { hook_set("probe", 1); return 0; }`;
  const events: DecodeEvent[] = [];
  const loop = new DecodeLoop(engine, { observe: { hidden: false, attention: false, kv: false } });
  for await (const ev of loop.run([{ prompt: PROMPT, maxTokens: 2, hook }])) events.push(ev);
  const err = events.find((e) => e.type === "hook-error");
  assert.ok(err && err.type === "hook-error");
  assert.match(err.message, /hidden state of layer 1 at position 0 was not recorded/);
});

test("a generation that fills the context ends with reason context-full", async () => {
  const small = await openEngine(storiesModelPath, { device: "cpu", contextSize: 32 });
  try {
    const events: DecodeEvent[] = [];
    for await (const ev of new DecodeLoop(small).run([{ prompt: PROMPT, maxTokens: 500 }]))
      events.push(ev);
    const done = events.find((e) => e.type === "done");
    assert.ok(done && done.type === "done");
    assert.equal(done.reason, "context-full");
    assert.ok(done.stats.sampledTokens > 10);
  } finally {
    small.dispose();
  }
});

test("a region injected in one sequence keeps the other sequences' logits intact", async () => {
  // Sequence 0 closes a region (its injection is decoded alone); sequence 1 never does and must
  // sample from its own distribution, exactly as when it runs by itself.
  const together = await collect([
    { seq: 0, prompt: PROMPT, maxTokens: 14, hook: forcing(chars(" [C: 6*7]")) },
    { seq: 1, prompt: "One day", maxTokens: 14 },
  ]);
  const alone = await collect([{ seq: 1, prompt: "One day", maxTokens: 14 }]);
  assert.match(doneText(together, 0), /VM\[42\]/);
  assert.equal(doneText(together, 1), doneText(alone, 1));
});

test("a rewind in one sequence keeps the other sequence's logits intact", async () => {
  const hook = `
int cp;
void watch(int step) { if (step == 3 && vm_rewind_len() == 0) { vm_rewind_memo("again"); vm_rewind(cp); } }
int main() { cp = vm_checkpoint(); hook_set("watch", 10); return 0; }`;
  const together = await collect([
    { seq: 0, prompt: PROMPT, maxTokens: 10, hook },
    { seq: 1, prompt: "One day", maxTokens: 10 },
  ]);
  assert.equal(together.filter((e) => e.type === "rewind").length, 1);
  const alone = await collect([{ seq: 1, prompt: "One day", maxTokens: 10 }]);
  assert.equal(doneText(together, 1), doneText(alone, 1));
});

test("a stop string ends the generation and is cut from the text", async () => {
  const events = await collect([{ prompt: PROMPT, maxTokens: 40, stop: ["Lily"] }]);
  const done = events.find((e) => e.type === "done");
  assert.ok(done && done.type === "done");
  assert.equal(done.reason, "stop");
  assert.equal(done.text, ", there was a little girl named ");
});

/** A long-lived loop's intake that hands over `requests` once, then lets the loop end. */
function handOnce(requests: GenerationRequest[]): {
  take(): GenerationRequest[];
  wait(): Promise<boolean>;
} {
  let handed = false;
  return {
    take: () => {
      if (handed) return [];
      handed = true;
      return requests;
    },
    wait: async () => !handed,
  };
}

test("in a long-lived loop, a request that fails ends alone with reason error", async () => {
  // The prompt does not fit the context: that request's own failure, found inside the loop.
  const tooLong = "Once upon a time ".repeat(400);
  const intake = handOnce([
    { seq: 0, prompt: PROMPT, maxTokens: 16 },
    { seq: 1, prompt: tooLong, maxTokens: 16 },
  ]);
  const events: DecodeEvent[] = [];
  for await (const ev of new DecodeLoop(engine).run([], intake)) events.push(ev);
  const failed = events.find((e) => e.type === "done" && e.seq === 1);
  assert.ok(failed && failed.type === "done");
  assert.equal(failed.reason, "error");
  assert.match(failed.error!, /the prompt has \d+ tokens but the context holds \d+/);
  const alone = await collect([{ seq: 0, prompt: PROMPT, maxTokens: 16 }]);
  assert.equal(doneText(events, 0), doneText(alone, 0));
  // Without an intake (one generation, one caller) the error ends the generation, as before.
  await assert.rejects(collect([{ seq: 1, prompt: tooLong, maxTokens: 16 }]), /the prompt has/);
});

test("in a long-lived loop, the tokens of a step reach the consumer before their decode", async () => {
  /** At each `sampled` call: the token events consumed so far, and the KV cells then held. */
  const seen: Array<{ tokens: number[]; cells: number[] }> = [];
  const events: DecodeEvent[] = [];
  const tokensOf = (seq: number) => events.filter((e) => e.type === "token" && e.seq === seq);
  const intake = {
    ...handOnce([
      { seq: 0, prompt: PROMPT, maxTokens: 6 },
      { seq: 1, prompt: "One day", maxTokens: 6 },
    ]),
    sampled: () =>
      seen.push({
        tokens: [tokensOf(0).length, tokensOf(1).length],
        cells: [engine.length(0), engine.length(1)],
      }),
  };
  for await (const ev of new DecodeLoop(engine).run([], intake)) events.push(ev);
  const prompts = [PROMPT, "One day"].map(
    (p) => engine.tokenize(p, { addSpecial: true, parseSpecial: true }).length,
  );
  // Six steps decode six tokens per sequence (the sixth token ends it at max-tokens unseen).
  assert.equal(seen.length, 6);
  for (const [step, { tokens, cells }] of seen.entries()) {
    // Step k's token is already with the consumer; the cache holds the prompt and k − 1 tokens.
    assert.deepEqual(tokens, [step + 1, step + 1]);
    assert.deepEqual(cells, [prompts[0]! + step, prompts[1]! + step]);
  }
});
