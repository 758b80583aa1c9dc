// The must-show path: the official openai client against `ruffian serve` on ruffian-nano, the
// answer computed in-band ([C: …] region, injected result), streaming and not; logprobs.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { statSync } from "node:fs";
import type { RunningServer } from "../../src/server/server.js";
import { client, question, serve } from "./helpers.js";

let server: RunningServer;
before(async () => {
  server = await serve({ slots: 2 });
});
after(() => server.close());

const ask = [{ role: "user" as const, content: question(4821, 377) }];

test("a chat completion computes 4821 × 377 in a [C: …] region", async () => {
  const res = await client(server).chat.completions.create({
    model: "ruffian-nano",
    messages: ask,
    temperature: 0,
  });
  const content = res.choices[0]!.message.content!;
  assert.match(content, /\[C: 4821\s*\*\s*377\] = VM\[1817517\]/);
  assert.match(content.split("\n").filter(Boolean).at(-1)!, /1817517/);
  assert.equal(res.choices[0]!.finish_reason, "stop");
  assert.ok(res.usage!.prompt_tokens > 0 && res.usage!.completion_tokens > 0);
  const ext = (res as unknown as { ruffian: { regions: Array<Record<string, unknown>> } }).ruffian;
  assert.equal(ext.regions.length, 1);
  assert.equal(ext.regions[0]!.language, "c");
  assert.equal(ext.regions[0]!.result, "1817517");
});

test("streaming gives the same text in several chunks, then a usage chunk", async () => {
  const openai = client(server);
  const plain = await openai.chat.completions.create({
    model: "ruffian-nano",
    messages: ask,
    temperature: 0,
  });
  const stream = await openai.chat.completions.create({
    model: "ruffian-nano",
    messages: ask,
    temperature: 0,
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = "";
  let contentChunks = 0;
  let usage;
  let finish;
  const events: Array<{ type: string }> = [];
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta.content;
    if (delta) {
      text += delta;
      contentChunks++;
    }
    finish ??= chunk.choices[0]?.finish_reason ?? undefined;
    if (chunk.usage) usage = chunk.usage;
    const ext = (chunk as unknown as { ruffian?: { events: Array<{ type: string }> } }).ruffian;
    if (ext) events.push(...ext.events);
  }
  assert.ok(contentChunks >= 2, `${contentChunks} content chunks`);
  assert.equal(text, plain.choices[0]!.message.content);
  assert.match(text, /1817517/);
  assert.equal(finish, "stop");
  assert.deepEqual(usage, plain.usage);
  const region = events.find((e) => e.type === "region") as unknown as Record<string, unknown>;
  assert.equal(region.result, "1817517");
  assert.match(String(region.source), /4821\s*\*\s*377/);
});

test("logprobs are sorted and consistent with the sampled token", async () => {
  const res = await client(server).chat.completions.create({
    model: "ruffian-nano",
    messages: ask,
    temperature: 0,
    logprobs: true,
    top_logprobs: 3,
  });
  const items = res.choices[0]!.logprobs!.content!;
  assert.ok(items.length > 5);
  for (const item of items) {
    assert.equal(item.top_logprobs.length, 3);
    const lps = item.top_logprobs.map((t) => t.logprob);
    assert.deepEqual(
      [...lps].sort((a, b) => b - a),
      lps,
      "top_logprobs sorted best first",
    );
    assert.ok(lps.every((lp) => lp <= 0));
    // Greedy: the sampled token is the most likely one, with the same log-probability.
    assert.equal(item.top_logprobs[0]!.token, item.token);
    assert.ok(Math.abs(item.top_logprobs[0]!.logprob - item.logprob) < 1e-9);
    assert.deepEqual(item.bytes, [...Buffer.from(item.token, "utf8")]);
  }
  // Sampled tokens are the content minus the injected results.
  const sampled = items.map((i) => i.token).join("");
  assert.ok(!sampled.includes("= VM[1817517]"), "injected text is not a sampled token");
  // usage counts the tokens with text, as the logprobs list them: not the end-of-text token.
  assert.equal(res.choices[0]!.finish_reason, "stop");
  assert.equal(res.usage!.completion_tokens, items.length);
});

test("each streamed chunk's logprobs are those of the tokens whose text it carries", async () => {
  // "\nThe answer" is never written, but "\n" and "\nThe" are held back until the next token
  // shows they do not start it: their logprobs must wait for their text.
  const stream = await client(server).chat.completions.create({
    model: "ruffian-nano",
    messages: ask,
    temperature: 0,
    logprobs: true,
    stop: ["\nThe answer"],
    stream: true,
    stream_options: { include_usage: true },
  });
  const all: string[] = [];
  let text = "";
  let usage;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices[0];
    if (!choice) continue;
    const content = choice.delta.content ?? "";
    text += content;
    const tokens = (choice.logprobs?.content ?? []).map((t) => t.token);
    all.push(...tokens);
    // The chunk's tokens appear in its own text, in order (injected results lie between them).
    let at = 0;
    for (const token of tokens) {
      const found = content.indexOf(token, at);
      assert.ok(
        found >= 0,
        `token ${JSON.stringify(token)} is not in its chunk ${JSON.stringify(content)}`,
      );
      at = found + token.length;
    }
  }
  assert.match(text, /1817517\.\n/);
  assert.ok(all.includes("\n"), "a held-back newline token was streamed");
  assert.equal(all.join(""), text.replace(/ = VM\[1817517\]/, ""));
  assert.equal(usage!.completion_tokens, all.length);
});

test("n = 2 with temperature gives two choices, each seeded differently", async () => {
  const res = await client(server).chat.completions.create({
    model: "ruffian-nano",
    messages: ask,
    temperature: 0,
    n: 2,
  });
  assert.equal(res.choices.length, 2);
  assert.deepEqual(
    res.choices.map((c) => c.index),
    [0, 1],
  );
  for (const c of res.choices) assert.match(c.message.content!, /1817517/);
});

test("GET /v1/models lists the served model with its file size", async () => {
  const models = await client(server).models.list();
  assert.deepEqual(
    models.data.map((m) => m.id),
    ["ruffian-nano"],
  );
  const extra = (models.data[0] as unknown as { ruffian: { path: string; bytes: number } }).ruffian;
  assert.equal(extra.bytes, statSync(extra.path).size);
  assert.ok(extra.bytes > 1_000_000);
});
