// Both places the engine can run (`--decode-thread worker`, the default: the engine, decode loop
// and scheduler on a worker thread; `main`: everything on the HTTP thread) serve the same
// answers: concurrent requests, in-band regions and their metrics, a looping region, a failing
// hook, sessions, the tokenizer, streamed text with and without per-token logprobs, and a
// disconnect that frees its slot. The other server tests run on the default; this file holds
// both paths to the same results.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import type { RunningServer } from "../../src/server/server.js";
import { DECODE_THREADS, type DecodeThread } from "../../src/server/decode-host.js";
import { storiesModelPath } from "../../src/paths.js";
import {
  forceTextHook,
  greedyStory,
  greedyStoryStream,
  longStoryStream,
  metric,
  post,
  question,
  serve,
  until,
} from "./helpers.js";

const servers: RunningServer[] = [];
after(async () => {
  for (const s of servers) await s.close();
});

async function start(decodeThread: DecodeThread, options: Parameters<typeof serve>[0] = {}) {
  const server = await serve({ ...options, decodeThread });
  servers.push(server);
  return server;
}

const chat = (server: RunningServer, content: string, ruffian?: object) =>
  post(server, "/v1/chat/completions", {
    model: "ruffian-nano",
    messages: [{ role: "user", content }],
    temperature: 0,
    ...(ruffian ? { ruffian } : {}),
  });

/** A streamed greedy stories260K completion of 48 tokens: its text, usage and logprobs entries. */
async function streamStory(server: RunningServer, extra: object = {}) {
  const res = await fetch(`${server.url}/v1/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ ...greedyStoryStream, ...extra }),
  });
  assert.equal(res.status, 200);
  let text = "";
  let completionTokens = -1;
  let logprobs = 0;
  for (const event of (await res.text()).split("\n\n")) {
    if (!event.startsWith("data: ") || event === "data: [DONE]") continue;
    const chunk = JSON.parse(event.slice(6));
    if (chunk.usage) completionTokens = chunk.usage.completion_tokens;
    const c = chunk.choices[0];
    text += c?.text ?? "";
    logprobs += c?.logprobs?.tokens.length ?? 0;
  }
  return { text, completionTokens, logprobs };
}

/** The greedy stories260K text of each path, compared at the end. */
const storyText = new Map<DecodeThread, string>();

for (const decodeThread of DECODE_THREADS) {
  test(`${decodeThread}: 16 concurrent requests are correct, and their regions reach /metrics`, async () => {
    const server = await start(decodeThread, { slots: 16 });
    const pairs = Array.from({ length: 16 }, (_, i) => [2003 + i * 97, 11 + i * 7] as const);
    const answers = await Promise.all(pairs.map(([a, b]) => chat(server, question(a, b))));
    answers.forEach((res, i) => {
      const [a, b] = pairs[i]!;
      assert.equal(res.status, 200, JSON.stringify(res.json));
      assert.match(res.json.choices[0].message.content, new RegExp(`VM\\[${a * b}\\]`));
    });
    const regions = answers.reduce((n, r) => n + r.json.ruffian.regions.length, 0);
    assert.equal(
      await metric(server, 'ruffian_vm_regions_total{language="c",outcome="ok"}'),
      regions,
    );
    const sampled = answers.reduce((n, r) => n + r.json.usage.completion_tokens, 0);
    // Every sampled token is counted (and an answer's end-of-text token, which usage omits).
    const generated = await metric(server, "ruffian_generated_tokens_total");
    assert.ok(generated >= sampled && generated <= sampled + 16, `${generated} vs ${sampled}`);
    assert.equal(server.context.host.busy, 0);
  });

  test(`${decodeThread}: a looping region errs in-band, a failing hook is a 422, others finish`, async () => {
    const server = await start(decodeThread, { slots: 4 });
    const [looping, hook, plain] = await Promise.all([
      chat(server, question(5, 6), { hook: forceTextHook(" [C: for(;;);]") }),
      chat(server, question(5, 6), { hook: "int main() { return 1 / 0; }" }),
      chat(server, question(321, 654)),
    ]);
    assert.equal(looping.status, 200);
    assert.match(looping.json.ruffian.regions[0].error, /limit/);
    assert.equal(hook.status, 422);
    assert.equal(hook.json.error.code, "hook_failed");
    assert.match(plain.json.choices[0].message.content, /VM\[209934\]/);
  });

  test(`${decodeThread}: sessions, /tokenize and /detokenize`, async () => {
    const server = await start(decodeThread, { slots: 2 });
    const set = await chat(server, question(2, 3), {
      session: "s",
      hook: "int main() { memory[7] = 4242; return 0; }",
    });
    assert.equal(set.status, 200);
    const get = await chat(server, question(2, 3), {
      session: "s",
      hook: 'int main() { printf("%d\\n", memory[7]); return 0; }',
    });
    assert.deepEqual(
      get.json.ruffian.hookConsole.map((h: { text: string }) => h.text),
      ["4242\n"],
    );
    const tokens = await post(server, "/tokenize", { content: "What is 6 times 7?" });
    assert.equal(tokens.status, 200);
    assert.ok(tokens.json.tokens.length > 3);
    const text = await post(server, "/detokenize", { tokens: tokens.json.tokens });
    assert.equal(text.json.content, "What is 6 times 7?");
    const bad = await post(server, "/detokenize", { tokens: [1, 99_999_999] });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.param, "tokens[1]");
  });

  // The decode worker sends a plain request's tokens as text runs and a request with logprobs
  // its token events (worker-protocol.ts): both streams carry the non-streaming text and count.
  test(`${decodeThread}: streamed text and usage are the same with and without logprobs`, async () => {
    const server = await start(decodeThread, { model: storiesModelPath, slots: 2 });
    const whole = await greedyStory(server, 48);
    assert.equal(whole.status, 200);
    const plain = await streamStory(server);
    const withLogprobs = await streamStory(server, { logprobs: 1 });
    assert.ok(whole.json.usage.completion_tokens > 20, JSON.stringify(whole.json.usage));
    for (const streamed of [plain, withLogprobs]) {
      assert.equal(streamed.text, whole.json.choices[0].text);
      assert.equal(streamed.completionTokens, whole.json.usage.completion_tokens);
    }
    assert.equal(plain.logprobs, 0);
    assert.equal(withLogprobs.logprobs, whole.json.usage.completion_tokens);
  });

  test(`${decodeThread}: a disconnect frees its slot; greedy text`, async () => {
    const server = await start(decodeThread, {
      model: storiesModelPath,
      slots: 2,
      streamIntervalMs: 0,
    });
    const controller = new AbortController();
    const res = await longStoryStream(server.url, controller.signal);
    const reader = res.body!.getReader();
    for (let i = 0; i < 3; i++) assert.equal((await reader.read()).done, false);
    controller.abort();
    await until(async () => server.context.host.busy === 0);
    await until(
      async () =>
        (await metric(server, 'ruffian_requests_cancelled_total{reason="disconnect"}')) === 1,
    );
    assert.equal(await metric(server, "ruffian_slots_busy"), 0);
    const story = await greedyStory(server, 40);
    assert.equal(story.status, 200);
    storyText.set(decodeThread, story.json.choices[0].text);
  });
}

test("both paths give the same greedy text", () => {
  const texts = DECODE_THREADS.map((d) => storyText.get(d));
  assert.ok(texts[0] && texts[0].length > 20, JSON.stringify(texts[0]));
  assert.equal(texts[1], texts[0]);
});
