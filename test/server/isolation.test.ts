// A request whose hook or region loops ends with its own error while concurrent requests finish
// correctly; VM sessions persist across requests that name them.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import type { RunningServer } from "../../src/server/server.js";
import { forceTextHook, metric, post, question, serve } from "./helpers.js";

let server: RunningServer;
before(async () => {
  server = await serve({ slots: 4 });
});
after(() => server.close());

const chat = (content: string, ruffian?: object, extra: object = {}) =>
  post(server, "/v1/chat/completions", {
    model: "ruffian-nano",
    messages: [{ role: "user", content }],
    temperature: 0,
    ...(ruffian ? { ruffian } : {}),
    ...extra,
  });

async function expectCorrect(a: number, b: number): Promise<void> {
  const res = await chat(question(a, b));
  assert.equal(res.status, 200);
  assert.match(res.json.choices[0].message.content, new RegExp(`VM\\[${a * b}\\]`));
}

test("a hook whose main() loops ends its own request with an error; others finish", async () => {
  const [looping, ...others] = await Promise.all([
    chat(question(5, 6), { hook: "int main() { for (;;) {} return 0; }" }),
    expectCorrect(123, 456),
    expectCorrect(789, 12),
  ]);
  void others;
  assert.equal(looping.status, 422);
  assert.equal(looping.json.error.type, "vm_error");
  assert.equal(looping.json.error.code, "hook_failed");
  assert.match(looping.json.error.message, /limit/);
});

test("a hook that loops at a later step ends its request; a streaming one gets an error event", async () => {
  const hook = `int spin(int step) { if (step == 3) { for (;;) {} } return 0; }
int main() { hook_set("spin", 10); return 0; }`;
  const plain = await chat(question(7, 8), { hook });
  assert.equal(plain.status, 422);
  assert.match(plain.json.error.message, /hook 'spin' failed at step 3/);
  const res = await fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "ruffian-nano",
      messages: [{ role: "user", content: question(7, 8) }],
      stream: true,
      ruffian: { hook },
    }),
  });
  const events = (await res.text()).split("\n\n").filter(Boolean);
  assert.equal(events.at(-1), "data: [DONE]");
  const error = JSON.parse(events.at(-2)!.slice("data: ".length));
  assert.equal(error.error.code, "hook_failed");
  const hookErrors = events
    .slice(0, -2)
    .flatMap((e) => JSON.parse(e.slice("data: ".length)).ruffian?.events ?? [])
    .filter((e: { type: string }) => e.type === "hook-error");
  assert.equal(hookErrors.length, 1);
  assert.deepEqual(Object.keys(hookErrors[0]).sort(), ["hook", "message", "seq", "step", "type"]);
  assert.ok(Number.isInteger(hookErrors[0].seq) && hookErrors[0].seq >= 0);
  await expectCorrect(31, 97);
});

test("a region that loops gets its limit error injected in-band; concurrent requests finish", async () => {
  const [forced] = await Promise.all([
    chat(question(2, 3), { hook: forceTextHook(" [C: for(;;);]") }, { max_tokens: 40 }),
    expectCorrect(4821, 377),
    expectCorrect(1234, 5678),
  ]);
  assert.equal(forced.status, 200, JSON.stringify(forced.json));
  const region = forced.json.ruffian.regions[0];
  assert.equal(region.source.trim(), "for(;;);");
  assert.match(region.error, /limit/);
  assert.match(forced.json.choices[0].message.content, /^ \[C: for\(;;\);\] = VM\[error: /);
});

test("ruffian.session keeps memory[] across requests; other sessions do not see it", async () => {
  const write = await chat(question(1, 2), {
    session: "alice",
    hook: "int main() { memory[0] = 4242; return 0; }",
  });
  assert.equal(write.status, 200);
  const read = 'int main() { printf("%d", memory[0]); return 0; }';
  const same = await chat(question(1, 2), { session: "alice", hook: read });
  const other = await chat(question(1, 2), { session: "bob", hook: read });
  assert.deepEqual(
    same.json.ruffian.hookConsole.map((h: { text: string }) => h.text),
    ["4242"],
  );
  assert.deepEqual(
    other.json.ruffian.hookConsole.map((h: { text: string }) => h.text),
    ["0"],
  );
});

test("POST /v1/exec runs C, Lisp and CALC in a fresh sandbox", async () => {
  const c = await post(server, "/v1/exec", { language: "c", source: "847*293" });
  assert.equal(c.status, 200);
  assert.equal(c.json.ok, true);
  assert.equal(c.json.text, "248171");
  const lisp = await post(server, "/v1/exec", {
    language: "lisp",
    source: "(define (f n) (if (< n 2) n (+ (f (- n 1)) (f (- n 2))))) (f 10)",
  });
  assert.equal(lisp.json.text, "55");
  const calc = await post(server, "/v1/exec", { language: "calc", source: "7*6" });
  assert.equal(calc.json.text, "42");
  const loop = await post(server, "/v1/exec", {
    language: "c",
    source: "int main() { for (;;) {} }",
    profile: "tiny",
  });
  assert.equal(loop.status, 200);
  assert.equal(loop.json.ok, false);
  assert.equal(loop.json.error.kind, "limit");
  const bad = await post(server, "/v1/exec", { language: "cobol", source: "x" });
  assert.equal(bad.status, 400);
  assert.equal(bad.json.error.param, "language");
});

test("/tokenize and /detokenize round-trip; a token outside the vocabulary is a 400", async () => {
  const tok = await post(server, "/tokenize", { content: "What is 6 times 7?" });
  assert.equal(tok.status, 200);
  assert.ok(tok.json.tokens.length > 3);
  const detok = await post(server, "/detokenize", { tokens: tok.json.tokens });
  assert.equal(detok.json.content.trim(), "What is 6 times 7?");
  const bad = await post(server, "/detokenize", { tokens: [1, 99999999] });
  assert.equal(bad.status, 400);
  assert.equal(bad.json.error.param, "tokens[1]");
});

test("activation reads in hooks need --glass-box; with it they work", async () => {
  const hook = `int h(int s) { float v = emb_variance(0, kv_seq_len() - 1); printf("%d\\n", v > 0.0); return 0; }
int main() { hook_set("h", 2); return 0; }`;
  const refused = await chat(question(6, 7), { hook });
  assert.equal(refused.status, 422);
  // The message names the intrinsic, the problem and the way out, never "internal error".
  assert.match(
    refused.json.error.message,
    /^hook 'h' failed at step 0: emb_variance: hidden state reads are not available from this engine at 1:\d+ \(start the server with --glass-box/,
  );
  const inMain = await chat(question(6, 7), {
    hook: 'int main() { float v = act_read("blocks.0.hook_resid_post", 0, 0); return 0; }',
  });
  assert.equal(inMain.status, 422);
  assert.match(
    inMain.json.error.message,
    /^the hook program failed: act_read: blocks\.0\.hook_resid_post reads are not available from this engine at 1:\d+ \(start the server with --glass-box/,
  );
  const inRegion = await chat(
    question(6, 7),
    { hook: forceTextHook(" [C: emb_read(0, 0, 0)]") },
    {
      max_tokens: 40,
    },
  );
  assert.equal(inRegion.status, 200);
  assert.match(
    inRegion.json.ruffian.regions[0].error,
    /^emb_read: hidden state reads are not available from this engine at 1:\d+ \(start the server with --glass-box/,
  );
  for (const r of [refused, inMain, inRegion])
    assert.doesNotMatch(JSON.stringify(r.json), /internal error/);
  const glassBox = await serve({ slots: 1, glassBox: true });
  try {
    const res = await post(glassBox, "/v1/chat/completions", {
      model: "ruffian-nano",
      messages: [{ role: "user", content: question(6, 7) }],
      temperature: 0,
      ruffian: { hook },
    });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.deepEqual(
      res.json.ruffian.hookConsole.map((h: { text: string }) => h.text),
      ["1\n", "1\n"],
    );
    assert.match(res.json.choices[0].message.content, /VM\[42\]/);
  } finally {
    await glassBox.close();
  }
});

test("a generation that runs past its deadline stops with finish_reason length", async () => {
  const slow = await serve({ slots: 1, deadlineMs: 200 });
  try {
    // Each step's hook runs 20M loop iterations (≥ 10 ms even at 2 per ns): ~30 steps cannot finish in 200 ms.
    const hook = `int burn(int s) { int x = 0; for (int i = 0; i < 20000000; i++) x ^= i; return x; }
int main() { hook_set("burn", 1000); return 0; }`;
    const res = await post(slow, "/v1/completions", {
      model: "ruffian-nano",
      prompt: "Q: What is 2 times 3?\nA:",
      max_tokens: 200,
      temperature: 0,
      ruffian: { hook, profile: "medium" },
    });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.equal(res.json.choices[0].finish_reason, "length");
    assert.equal(res.json.ruffian.stopped, "deadline");
    assert.ok(res.json.usage.completion_tokens < 200);
    assert.equal(await metric(slow, 'ruffian_requests_cancelled_total{reason="deadline"}'), 1);
  } finally {
    await slow.close();
  }
});
