// Regions that cannot read the model run on VM workers: while one request's region computes for
// most of a second, another request streams its whole answer; /v1/exec does not stall streams;
// regions that read the model or the hook's definitions still run on the loop's thread.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import type { RunningServer } from "../../src/server/server.js";
import { forceTextHook, post, question, serve } from "./helpers.js";

let server: RunningServer;
before(async () => {
  server = await serve({ slots: 4 });
});
after(() => server.close());

interface Chunk {
  at: number;
  json: any;
}

/** Streams a chat completion and calls `onChunk` with each parsed chunk as it arrives. */
async function streamChat(body: object, onChunk: (c: Chunk) => void = () => {}): Promise<Chunk[]> {
  const res = await fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "ruffian-nano", temperature: 0, stream: true, ...body }),
  });
  assert.equal(res.status, 200);
  const chunks: Chunk[] = [];
  const decoder = new TextDecoder();
  let buffered = "";
  const reader = res.body!.getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    const at = performance.now();
    buffered += decoder.decode(read.value, { stream: true });
    let end: number;
    while ((end = buffered.indexOf("\n\n")) >= 0) {
      const event = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      if (event === "data: [DONE]") continue;
      const chunk = { at, json: JSON.parse(event.slice("data: ".length)) };
      chunks.push(chunk);
      onChunk(chunk);
    }
  }
  return chunks;
}

const content = (chunks: Chunk[]) =>
  chunks.map((c) => c.json.choices[0]?.delta.content ?? "").join("");

/** fib(38) = 39088169: some 0.7 s of VM time, with no global and no intrinsic. */
const SLOW_REGION = " [C: int fib(int k){return k<2?k:fib(k-1)+fib(k-2);} fib(38)]";

test("while one request's region computes, another request streams its whole answer", async () => {
  let startOther!: () => void;
  const otherMayStart = new Promise<void>((resolve) => (startOther = resolve));
  let written = "";
  const slow = streamChat(
    {
      messages: [{ role: "user", content: question(2, 3) }],
      max_tokens: 90,
      ruffian: { hook: forceTextHook(SLOW_REGION), profile: "medium" },
    },
    (c) => {
      written += c.json.choices[0]?.delta.content ?? "";
      // The region is about to close: the other request starts now.
      if (written.includes("fib(38")) startOther();
    },
  );
  await otherMayStart;
  const other = await streamChat({ messages: [{ role: "user", content: question(4821, 377) }] });
  const slowChunks = await slow;

  const resultAt = slowChunks.find((c) =>
    c.json.ruffian?.events?.some((e: { type: string }) => e.type === "region"),
  )!.at;
  const otherText = content(other);
  assert.match(otherText, /\[C: 4821\s*\*\s*377\] = VM\[1817517\]/, otherText);
  const before = other.filter((c) => c.json.choices[0]?.delta.content && c.at < resultAt);
  assert.ok(
    before.length >= 3,
    `the other request streamed ${before.length} content chunks before the slow region's result`,
  );
  const slowText = content(slowChunks);
  assert.ok(slowText.startsWith(`${SLOW_REGION} = VM[39088169]`), slowText);
});

test("a long /v1/exec leaves streams going", async () => {
  const exec = post(server, "/v1/exec", {
    language: "c",
    source: "int fib(int k){return k<2?k:fib(k-1)+fib(k-2);} fib(38)",
    profile: "medium",
  }).then((r) => ({ ...r, at: performance.now() }));
  const chunks = await streamChat({ messages: [{ role: "user", content: question(77, 13) }] });
  const done = await exec;
  assert.equal(done.json.text, "39088169");
  assert.match(content(chunks), /VM\[1001\]/);
  const before = chunks.filter((c) => c.json.choices[0]?.delta.content && c.at < done.at);
  assert.ok(before.length >= 3, `${before.length} content chunks came before the program's answer`);
});

test("a region that calls the hook's function or an intrinsic still runs on the loop's thread", async () => {
  // `twice` exists only in this request's VM session; tok_count reads the model.
  const hook = `int twice(int k) { return 2 * k; }\n${forceTextHook(" [C: twice(21) + tok_count() - tok_count()]")}`;
  const res = await post(server, "/v1/chat/completions", {
    model: "ruffian-nano",
    messages: [{ role: "user", content: question(2, 3) }],
    temperature: 0,
    max_tokens: 60,
    ruffian: { hook },
  });
  assert.equal(res.status, 200, JSON.stringify(res.json));
  assert.equal(res.json.ruffian.regions[0].result, "42");
});
