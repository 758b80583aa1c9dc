// The server renders chat requests with the model's own Jinja chat template: the official openai
// client on loopback against a random-weight model with the real Qwen2 vocabulary and its ChatML
// template. The prompt the server decodes is exactly the ChatML text (its token count, which a
// request without the template, or with another one, would not give), a template given with
// chatTemplate (`serve --chat-template`) replaces it, and a forced <|im_end|> ends the answer
// with finish_reason "stop" and is never part of its text.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import type { RunningServer } from "../../src/server/server.js";
import { ensureRealVocabModel } from "../../src/models/real-vocab-model.js";
import { openEngine, type LlamaEngine } from "../../src/engine/open.js";
import { forcingHook, tokenIds } from "../decode/forcing.js";
import { client, serve } from "./helpers.js";

let modelPath: string;
let engine: LlamaEngine;
let server: RunningServer;
before(async () => {
  modelPath = await ensureRealVocabModel({ vocabulary: "qwen2" });
  engine = await openEngine(modelPath, { contextSize: 512 });
  server = await serve({ model: modelPath, slots: 1, ctx: 512 });
});
after(async () => {
  await server.close();
  engine.dispose();
});

const promptLength = (text: string) =>
  engine.tokenize(text, { addSpecial: true, parseSpecial: true }).length;

const chatml = (system: string, user: string) =>
  `<|im_start|>system\n${system}<|im_end|>\n<|im_start|>user\n${user}<|im_end|>\n` +
  "<|im_start|>assistant\n";

test("a chat completion is rendered with the model's ChatML template", async () => {
  const openai = client(server);
  const withSystem = await openai.chat.completions.create({
    model: server.context.modelId,
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Hello there" },
    ],
    max_tokens: 2,
    temperature: 0,
  });
  assert.equal(withSystem.usage!.prompt_tokens, promptLength(chatml("Be brief.", "Hello there")));
  // The messages' text alone (a plain prompt) is far shorter than the ChatML text.
  assert.ok(withSystem.usage!.prompt_tokens > promptLength("Be brief.\nHello there") + 10);
  // Without a system message, the template's default system prompt is written.
  const withoutSystem = await openai.chat.completions.create({
    model: server.context.modelId,
    messages: [{ role: "user", content: "Hello there" }],
    max_tokens: 2,
    temperature: 0,
  });
  assert.equal(
    withoutSystem.usage!.prompt_tokens,
    promptLength(chatml("You are a helpful assistant", "Hello there")),
  );
});

test("a forced <|im_end|> ends the answer: finish_reason stop, the token not in the text", async () => {
  const vocab = tokenIds(engine);
  const words = [" Hello", " world"].map((w) => vocab.get(w)!);
  assert.ok(words.every((id) => id !== undefined));
  const [imEnd] = engine.tokenize("<|im_end|>", { addSpecial: false, parseSpecial: true });
  assert.ok(imEnd !== undefined && engine.isEndOfGeneration(imEnd));
  const openai = client(server);
  const request = (ids: number[]) =>
    openai.chat.completions.create({
      model: server.context.modelId,
      messages: [{ role: "user", content: "Say hello" }],
      max_tokens: 12,
      temperature: 0,
      // The ruffian extension: a C hook that forces these tokens first.
      ruffian: { hook: forcingHook(ids) },
    } as Parameters<typeof openai.chat.completions.create>[0] & { stream?: false });
  const stopped = await request([...words, imEnd!]);
  assert.equal(stopped.choices[0]!.finish_reason, "stop");
  assert.equal(stopped.choices[0]!.message.content, " Hello world");
  assert.ok(stopped.usage!.completion_tokens <= 3, String(stopped.usage!.completion_tokens));
  // The same words without <|im_end|>: the random model goes on to the token budget.
  const going = await request(words);
  assert.equal(going.choices[0]!.finish_reason, "length");
  assert.ok(going.choices[0]!.message.content!.startsWith(" Hello world"));
  assert.doesNotMatch(going.choices[0]!.message.content!, /<\|im_end\|>/);
});

test("chatTemplate (serve --chat-template) replaces the model's template", async () => {
  const marker =
    "{% for m in messages %}<|im_start|>{{ m.role }}\nOVERRIDE {{ m.content }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";
  const other = await serve({ model: modelPath, slots: 1, ctx: 512, chatTemplate: marker });
  try {
    const res = await client(other).chat.completions.create({
      model: other.context.modelId,
      messages: [{ role: "user", content: "Hello there" }],
      max_tokens: 1,
      temperature: 0,
    });
    assert.equal(
      res.usage!.prompt_tokens,
      promptLength("<|im_start|>user\nOVERRIDE Hello there<|im_end|>\n<|im_start|>assistant\n"),
    );
  } finally {
    await other.close();
  }
});
