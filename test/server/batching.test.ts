// Continuous batching on one engine context: 16 concurrent streams each get their own answer,
// a conversation's next turn reuses the slot's KV prefix, a disconnect frees the slot within one
// decode step, and a full queue answers 503 with Retry-After.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import type { RunningServer } from "../../src/server/server.js";
import { storiesModelPath } from "../../src/paths.js";
import {
  client,
  forceTextHook,
  greedyStory,
  longStoryStream,
  metric,
  post,
  question,
  serve,
  until,
} from "./helpers.js";

let nano: RunningServer;
let stories: RunningServer;
before(async () => {
  nano = await serve({ slots: 16 });
  // A chunk per token (no gathering per write): the disconnect test reads a few chunks of a
  // story that stories260K finishes in well under a second, then leaves mid-stream.
  stories = await serve({ model: storiesModelPath, slots: 2, queueLimit: 1, streamIntervalMs: 0 });
});
after(async () => {
  await nano.close();
  await stories.close();
});

async function streamAnswer(server: RunningServer, content: string): Promise<string> {
  const stream = await client(server).chat.completions.create({
    model: "ruffian-nano",
    messages: [{ role: "user", content }],
    temperature: 0,
    stream: true,
  });
  let text = "";
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
  return text;
}

test("16 concurrent streaming requests each get their own correct answer", async () => {
  const pairs = Array.from({ length: 16 }, (_, i) => [1009 + i * 331, 13 + i * 29] as const);
  // Alone, one at a time: the reference answer of each question.
  const alone: string[] = [];
  for (const [a, b] of pairs.slice(0, 3)) alone.push(await streamAnswer(nano, question(a, b)));
  let busiest = 0;
  const watch = setInterval(() => {
    busiest = Math.max(busiest, nano.context.host.busy);
  }, 1);
  const answers = await Promise.all(pairs.map(([a, b]) => streamAnswer(nano, question(a, b))));
  clearInterval(watch);
  answers.forEach((text, i) => {
    const [a, b] = pairs[i]!;
    assert.match(text, new RegExp(`\\[C: ${a}\\s*\\*\\s*${b}\\] = VM\\[${a * b}\\]`), text);
    assert.match(text.trim().split("\n").at(-1)!, new RegExp(`\\b${a * b}\\b`), text);
  });
  assert.deepEqual(answers.slice(0, 3), alone, "batched answers equal the answers alone");
  assert.ok(busiest > 1, `requests overlapped in the batch (at most ${busiest} busy)`);
});

test("the next turn of a conversation decodes only the new tokens", async () => {
  const openai = client(nano);
  const first = [{ role: "user" as const, content: question(2718, 281) }];
  const r1 = await openai.chat.completions.create({
    model: "ruffian-nano",
    messages: first,
    temperature: 0,
  });
  const evaluatedBefore = await metric(nano, "ruffian_prompt_tokens_total");
  const second = {
    model: "ruffian-nano",
    messages: [
      ...first,
      { role: "assistant" as const, content: r1.choices[0]!.message.content!.trim() },
      { role: "user" as const, content: question(31, 41) },
    ],
    temperature: 0,
  };
  const r2 = await openai.chat.completions.create(second);
  const evaluated = (await metric(nano, "ruffian_prompt_tokens_total")) - evaluatedBefore;
  const cached = r2.usage!.prompt_tokens_details!.cached_tokens!;
  // The same turn on a fresh server, whose slot holds nothing: the same answer, all decoded.
  const fresh = await serve({ slots: 1 });
  try {
    const r2Fresh = await client(fresh).chat.completions.create(second);
    assert.equal(r2Fresh.usage!.prompt_tokens_details!.cached_tokens, 0);
    assert.equal(r2.choices[0]!.message.content, r2Fresh.choices[0]!.message.content);
  } finally {
    await fresh.close();
  }
  assert.ok(cached >= r1.usage!.prompt_tokens, `cached ${cached}`);
  assert.equal(evaluated, r2.usage!.prompt_tokens - cached);
  assert.ok(evaluated < r2.usage!.prompt_tokens / 2, `evaluated ${evaluated}`);
});

test("a client that disconnects mid-stream frees its slot within one decode step", async () => {
  const controller = new AbortController();
  const res = await longStoryStream(stories.url, controller.signal);
  const reader = res.body!.getReader();
  let chunks = 0;
  while (chunks < 5) {
    const { value, done } = await reader.read();
    assert.ok(!done, `the stream ended after ${chunks} chunks, before the client could leave`);
    chunks += new TextDecoder().decode(value).split("data: ").length - 1;
  }
  assert.equal(await metric(stories, "ruffian_slots_busy"), 1);
  controller.abort();
  await until(async () => (await metric(stories, "ruffian_cancel_steps_count")) === 1);
  assert.equal(await metric(stories, "ruffian_slots_busy"), 0);
  assert.equal(await metric(stories, 'ruffian_requests_cancelled_total{reason="disconnect"}'), 1);
  assert.equal(await metric(stories, 'ruffian_cancel_steps_bucket{le="1"}'), 1);
  assert.ok((await metric(stories, "ruffian_generated_tokens_total")) < 400);
  // The freed slot serves the next request.
  const next = await greedyStory(stories, 8);
  assert.equal(next.status, 200);
  assert.equal(next.json.choices[0].finish_reason, "length");
});

test("when every slot is busy and the queue is full, a request gets 503 with Retry-After", async () => {
  const long = () =>
    fetch(`${stories.url}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "stories260K", prompt: "Once", max_tokens: 300, stream: true }),
      signal: controller.signal,
    });
  const controller = new AbortController();
  // Two fill the slots, one waits in the queue (limit 1), the fourth is refused.
  const held = [await long(), await long()];
  await until(async () => stories.context.host.busy === 2);
  const queued = long();
  await until(async () => stories.context.host.waiting === 1);
  const refused = await post(stories, "/v1/completions", {
    model: "stories260K",
    prompt: "Once",
    max_tokens: 4,
  });
  assert.equal(refused.status, 503);
  assert.equal(refused.headers.get("retry-after"), "1");
  assert.equal(refused.json.error.code, "queue_full");
  assert.equal(refused.json.error.type, "server_overloaded");
  controller.abort();
  await Promise.allSettled([queued, ...held.map((r) => r.body?.cancel())]);
  await until(async () => stories.context.host.busy + stories.context.host.waiting === 0);
  assert.equal(await metric(stories, "ruffian_requests_rejected_total"), 1);
});

test("/v1/completions on stories260K equals `ruffian run` for the same prompt", async () => {
  const { spawnSync } = await import("node:child_process");
  const { join } = await import("node:path");
  const { packageRoot } = await import("../../src/paths.js");
  const run = spawnSync(
    process.execPath,
    [join(packageRoot, "bin", "ruffian.js"), "run", "-p", "Once upon a time", "-n", "40"],
    { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } },
  );
  assert.equal(run.status, 0, run.stderr);
  const res = await client(stories).completions.create({
    model: "stories260K",
    prompt: "Once upon a time",
    max_tokens: 40,
    temperature: 0,
  });
  assert.equal("Once upon a time" + res.choices[0]!.text + "\n", run.stdout);
  assert.equal(res.choices[0]!.finish_reason, "length");
});

test("a request that fills its slot ends alone; the request beside it runs to its own end", async () => {
  // The injected ` = VM[42]` makes A need more cells than its slot has before max_tokens (by
  // default what fits beside the prompt) is reached: its decode finds its KV stream full.
  const completion = (body: object) =>
    post(stories, "/v1/completions", { model: "stories260K", temperature: 0, ...body });
  const filling = completion({ prompt: "Once", ruffian: { hook: forceTextHook(" [C: 6*7]") } });
  // B joins once A is decoding, so B is still running when A fills up.
  await until(async () => stories.context.host.busy === 1);
  const [a, b] = await Promise.all([filling, completion({ prompt: "Once upon a time" })]);
  assert.equal(a.status, 200, JSON.stringify(a.json));
  assert.match(a.json.choices[0].text, /^ \[C: 6\*7\] = VM\[42\]/);
  assert.equal(a.json.choices[0].ruffian.stopped, "context-full");
  assert.equal(a.json.choices[0].finish_reason, "length");
  assert.equal(b.status, 200, JSON.stringify(b.json));
  assert.equal(b.json.choices[0].ruffian.stopped, "max-tokens");
  const slot = stories.context.limits.slotContext;
  assert.equal(b.json.usage.completion_tokens, slot - b.json.usage.prompt_tokens);
});

test("a request that keeps rewinding leaves the greedy text of the request beside it unchanged", async () => {
  const completion = (body: object) =>
    post(stories, "/v1/completions", { model: "stories260K", temperature: 0, ...body });
  // Long enough (~0.1 s) that the test's 5 ms polls see it running even when this thread, the
  // HTTP side, is kept off a busy machine's cores for a while: at 40 tokens it could finish
  // between two polls and the wait below never ended.
  const steady = { prompt: "Once upon a time", max_tokens: 400 };
  const alone = await completion(steady);
  // Each rewind re-decodes the rewinding sequence alone, between the other's sampling and its
  // decode: the other's logits of that step must not come back at the next one.
  const rewinding = `int cp; int n;
int h(int step) { if (step % 3 == 2 && n < 20) { n++; vm_rewind(cp); } return 0; }
int main() { cp = vm_checkpoint(); hook_set("h", 1000); return 0; }`;
  const first = completion(steady);
  await until(async () => stories.context.host.busy === 1);
  const [beside, rewound] = await Promise.all([
    first,
    completion({ prompt: "Once", max_tokens: 40, ruffian: { hook: rewinding } }),
  ]);
  assert.equal(rewound.status, 200, JSON.stringify(rewound.json));
  assert.equal(rewound.json.choices[0].ruffian.rewinds.length, 20);
  assert.equal(beside.json.choices[0].text, alone.json.choices[0].text);
});
