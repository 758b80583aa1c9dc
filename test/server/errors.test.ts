// Bad requests get a 4xx JSON error in OpenAI's shape and the server keeps serving; API keys
// guard /v1/* while /health stays open.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import type { RunningServer } from "../../src/server/server.js";
import { client, post, question, serve } from "./helpers.js";

let server: RunningServer;
before(async () => {
  server = await serve({ slots: 2, apiKeys: ["sk-test-1"], bodyBytes: 64 * 1024 });
});
after(() => server.close());

const auth = { authorization: "Bearer sk-test-1" };
const good = {
  model: "ruffian-nano",
  messages: [{ role: "user", content: question(12, 34) }],
  temperature: 0,
};

function assertOpenAIError(json: any, code?: string, param?: string | null): void {
  assert.equal(typeof json.error?.message, "string", JSON.stringify(json));
  assert.ok(json.error.message.length > 0);
  assert.equal(typeof json.error.type, "string");
  assert.ok("param" in json.error && "code" in json.error);
  if (code !== undefined) assert.equal(json.error.code, code, JSON.stringify(json));
  if (param !== undefined) assert.equal(json.error.param, param, JSON.stringify(json));
}

async function stillServes(): Promise<void> {
  const ok = await post(server, "/v1/chat/completions", good, auth);
  assert.equal(ok.status, 200);
  assert.match(ok.json.choices[0].message.content, /408/);
}

const cases: Array<[string, string | object, number, string?, string?]> = [
  ["malformed JSON", '{"model": "ruffian-nano", "messages": [', 400, "invalid_json"],
  ["missing messages", { model: "ruffian-nano" }, 400, "missing_required_parameter", "messages"],
  [
    "messages of the wrong type",
    { model: "ruffian-nano", messages: "hi" },
    400,
    "invalid_value",
    "messages",
  ],
  ["temperature as a string", { ...good, temperature: "0" }, 400, "invalid_value", "temperature"],
  [
    "an unknown role",
    { ...good, messages: [{ role: "robot", content: "x" }] },
    400,
    "invalid_value",
  ],
  ["an unknown model", { ...good, model: "gpt-9" }, 404, "model_not_found", "model"],
  ["n larger than the slots", { ...good, n: 3 }, 400, undefined, "n"],
  [
    "a prompt longer than a slot",
    { ...good, messages: [{ role: "user", content: "7 ".repeat(400) }] },
    400,
    "context_length_exceeded",
  ],
  [
    "max_tokens past the slot",
    { ...good, max_tokens: 100000 },
    400,
    "context_length_exceeded",
    "max_tokens",
  ],
  [
    "an unsupported parameter that changes the result",
    { ...good, presence_penalty: 0.5 },
    400,
    "unsupported_parameter",
    "presence_penalty",
  ],
  [
    "tools",
    { ...good, tools: [{ type: "function", function: { name: "f" } }] },
    400,
    "unsupported_parameter",
    "tools",
  ],
  ["an unknown ruffian option", { ...good, ruffian: { hooks: "x" } }, 400, "invalid_value"],
  [
    "a body over the size limit",
    { ...good, messages: [{ role: "user", content: "x".repeat(70_000) }] },
    413,
    "body_too_large",
  ],
];

for (const [name, body, status, code, param] of cases) {
  test(`${name}: ${status} in OpenAI's shape, and the server keeps serving`, async () => {
    const res = await post(server, "/v1/chat/completions", body, auth);
    assert.equal(res.status, status, JSON.stringify(res.json));
    assertOpenAIError(res.json, code, param);
    await stillServes();
  });
}

test("too many messages: 400 naming messages", async () => {
  const messages = Array.from({ length: 300 }, () => ({ role: "user", content: "1" }));
  const res = await post(server, "/v1/chat/completions", { ...good, messages }, auth);
  assert.equal(res.status, 400);
  assertOpenAIError(res.json, undefined, "messages");
});

test("the openai client sees a 400 as BadRequestError with the message", async () => {
  await assert.rejects(
    client(server, "sk-test-1").chat.completions.create({
      model: "ruffian-nano",
      messages: [{ role: "user", content: "hi" }],
      frequency_penalty: 1,
    }),
    (err: unknown) =>
      err instanceof OpenAI.BadRequestError && /frequency_penalty/.test(err.message),
  );
});

test("a missing or wrong API key gets 401; /health stays open", async () => {
  const missing = await post(server, "/v1/chat/completions", good);
  assert.equal(missing.status, 401);
  assertOpenAIError(missing.json, "invalid_api_key");
  const wrong = await post(server, "/v1/chat/completions", good, { authorization: "Bearer nope" });
  assert.equal(wrong.status, 401);
  await assert.rejects(client(server, "nope").models.list(), OpenAI.AuthenticationError);
  const health = await fetch(`${server.url}/health`);
  assert.equal(health.status, 200);
  assert.equal(((await health.json()) as { status: string }).status, "ok");
  assert.equal((await client(server, "sk-test-1").models.list()).data[0]!.id, "ruffian-nano");
});

test("an unknown route is a 404 in OpenAI's shape; GET / is left to the web UI", async () => {
  const res = await fetch(`${server.url}/v1/nothing`, { headers: auth });
  assert.equal(res.status, 404);
  assertOpenAIError(await res.json(), "not_found");
});
