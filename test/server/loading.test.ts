// The server listens before it loads the model: while the model loads, /health answers 503
// "loading" and the model routes 503 with Retry-After, in OpenAI's shape; once loaded, the same
// server answers. The load is held with startServer's beforeLoad hook (the real model still
// loads after it), so the test sees the loading state without racing a fast load.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { storiesModelPath } from "../../src/paths.js";
import { serve } from "./helpers.js";

test("/health is 503 loading and /v1/* 503 with Retry-After until the model is loaded", async () => {
  let letLoad!: () => void;
  const held = new Promise<void>((resolve) => (letLoad = resolve));
  let listening!: (url: string) => void;
  const url = new Promise<string>((resolve) => (listening = resolve));
  const starting = serve({
    model: storiesModelPath,
    slots: 1,
    apiKeys: ["sesame"],
    onListening: listening,
    beforeLoad: () => held,
  });
  const base = await url;
  const auth = { authorization: "Bearer sesame", "content-type": "application/json" };

  const health = await fetch(`${base}/health`);
  assert.equal(health.status, 503);
  assert.equal(health.headers.get("retry-after"), "1");
  const body = (await health.json()) as { status: string; error: Record<string, unknown> };
  assert.equal(body.status, "loading");
  assert.equal(body.error.code, "model_loading");
  assert.match(String(body.error.message), /stories260K is still loading/);
  assert.deepEqual(Object.keys(body.error).sort(), ["code", "message", "param", "type"]);

  const completion = await fetch(`${base}/v1/completions`, {
    method: "POST",
    headers: auth,
    body: JSON.stringify({ model: "stories260K", prompt: "Once upon a time", max_tokens: 4 }),
  });
  assert.equal(completion.status, 503);
  assert.equal(completion.headers.get("retry-after"), "1");
  assert.equal(((await completion.json()) as any).error.code, "model_loading");
  const models = await fetch(`${base}/v1/models`, { headers: auth });
  assert.equal(models.status, 503);
  const tokenize = await fetch(`${base}/tokenize`, {
    method: "POST",
    headers: auth,
    body: JSON.stringify({ content: "hi" }),
  });
  assert.equal(tokenize.status, 503);
  // The key is still checked first, and /metrics answers throughout.
  assert.equal((await fetch(`${base}/v1/models`)).status, 401);
  assert.equal((await fetch(`${base}/metrics`)).status, 200);

  letLoad();
  const server = await starting;
  try {
    assert.equal(server.url, base);
    const ready = await fetch(`${base}/health`);
    assert.equal(ready.status, 200);
    assert.equal(((await ready.json()) as { status: string }).status, "ok");
    const res = await fetch(`${base}/v1/completions`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({
        model: "stories260K",
        prompt: "Once upon a time",
        max_tokens: 4,
        temperature: 0,
      }),
    });
    assert.equal(res.status, 200);
    assert.ok(((await res.json()) as any).choices[0].text.length > 0);
  } finally {
    await server.close();
  }
});

test("a model file that fails to load after the server listens ends startServer with its error", async () => {
  const dir = mkdtempSync(join(tmpdir(), "ruffian-loading-"));
  const notAModel = join(dir, "notes.gguf");
  writeFileSync(notAModel, "these are notes, not a GGUF model\n");
  let listened = "";
  try {
    await assert.rejects(
      serve({ model: notAModel, onListening: (u) => (listened = u) }),
      /notes\.gguf/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.match(listened, /^http:\/\/127\.0\.0\.1:\d+$/);
  // The port was given back: nothing listens there any more.
  await assert.rejects(fetch(`${listened}/health`));
});
