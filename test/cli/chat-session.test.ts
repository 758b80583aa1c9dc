// The chat session without a terminal: prompts for each prompt style (the built-in system prompt
// and its worked examples for chat-template models, Q:/A: for ruffian-nano, continuation for base
// models), dropping old turns to fit the context, and the worked examples' VM results.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openEngine } from "../../src/engine/open.js";
import { storiesModelPath } from "../../src/paths.js";
import { randomLlamaWeights, writeLlamaGguf, type LlamaConfig } from "../../src/nano/llama-gguf.js";
import { NANO_VOCAB } from "../../src/nano/vocab.js";
import type { GgufValue } from "../../src/nano/gguf-writer.js";
import { ChatSession, type ChatSettings } from "../../src/cli/chat/session.js";
import {
  WORKED_EXAMPLES,
  builtinSystemPrompt,
  fewShotPrefix,
  DEFAULT_FEW_SHOT,
} from "../../src/cli/chat/system-prompt.js";
import { runC } from "../../src/vm/index.js";

const tmp = mkdtempSync(join(tmpdir(), "ruffian-chat-session-"));
after(() => rmSync(tmp, { recursive: true, force: true }));

const settings = (extra: Partial<ChatSettings> = {}): ChatSettings => ({
  maxTokens: 8,
  sampling: { temperature: 0 },
  inject: true,
  ...extra,
});

/** A tiny random-weight llama GGUF with a ChatML template, or named ruffian-nano. */
function tinyModel(name: string): string {
  const cfg: LlamaConfig = {
    nVocab: NANO_VOCAB.length,
    nEmbd: 32,
    nLayer: 1,
    nHead: 4,
    nHeadKv: 2,
    nFf: 64,
    nCtx: 2048,
    rmsEps: 1e-5,
    ropeBase: 10000,
  };
  const path = join(tmp, `${name}.gguf`);
  const chatml =
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}" +
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
  const extra: Record<string, GgufValue> =
    name === "ruffian-nano"
      ? {}
      : {
          "general.name": { type: "string", value: name },
          "tokenizer.chat_template": { type: "string", value: chatml },
        };
  writeLlamaGguf(path, cfg, randomLlamaWeights(cfg), extra);
  return path;
}

test("every worked example's VM result is what the VM computes", () => {
  assert.ok(WORKED_EXAMPLES.length >= 10);
  for (const ex of WORKED_EXAMPLES) {
    const outcome = runC(ex.code);
    assert.ok(outcome.ok, `${ex.code}: ${!outcome.ok && outcome.error.message}`);
    assert.equal(outcome.text.replace(/\n$/, ""), ex.result, ex.code);
  }
});

test("the built-in system prompt carries as many worked examples as asked", () => {
  const count = (text: string) => (text.match(/^User: /gm) ?? []).length;
  assert.equal(count(builtinSystemPrompt()), DEFAULT_FEW_SHOT);
  assert.equal(count(builtinSystemPrompt(0)), 0);
  assert.equal(count(builtinSystemPrompt(3)), 3);
  assert.equal(count(builtinSystemPrompt(99)), WORKED_EXAMPLES.length);
  assert.match(builtinSystemPrompt(1), /\[C: 847\*293\] = VM\[248171\]/);
  assert.equal((fewShotPrefix(2).match(/^Q: /gm) ?? []).length, 2);
});

test("a chat-template model gets the system prompt through its template", async () => {
  const engine = await openEngine(tinyModel("tiny-chat"), { device: "cpu", contextSize: 2048 });
  try {
    const session = new ChatSession(engine, settings({ fewShot: 2 }));
    assert.equal(session.style, "chat-template");
    session.messages.push({ role: "user", content: "What is 6 times 7?" });
    const prompt = session.buildPrompt();
    assert.match(prompt, /^<\|im_start\|>system\nYou are Ruffian/);
    assert.equal((prompt.match(/^User: /gm) ?? []).length, 2);
    assert.match(
      prompt,
      /<\|im_start\|>user\nWhat is 6 times 7\?<\|im_end\|>\n<\|im_start\|>assistant\n$/,
    );

    const own = new ChatSession(engine, settings({ system: "Be brief." }));
    own.messages.push({ role: "user", content: "hi" });
    assert.match(own.buildPrompt(), /^<\|im_start\|>system\nBe brief\.<\|im_end\|>/);

    // A whole turn through the decode loop: the answer joins the conversation.
    const done = await session.send("And 7 times 8?", () => {});
    assert.equal(done.stats.sampledTokens <= 8, true);
    assert.deepEqual(
      session.messages.map((m) => m.role),
      ["user", "user", "assistant"],
    );
  } finally {
    engine.dispose();
  }
});

test("ruffian-nano gets Q:/A: prompts and no system prompt", async () => {
  const engine = await openEngine(tinyModel("ruffian-nano"), { device: "cpu", contextSize: 256 });
  try {
    const session = new ChatSession(engine, settings());
    assert.equal(session.style, "nano");
    session.messages.push(
      { role: "user", content: "What is 2+2?" },
      { role: "assistant", content: "[C: 2+2] = VM[4]" },
      { role: "user", content: "And 3+3?" },
    );
    assert.equal(session.buildPrompt(), "Q: What is 2+2?\nA: [C: 2+2] = VM[4]\nQ: And 3+3?\nA:");
  } finally {
    engine.dispose();
  }
});

test("old turns are left out when the conversation outgrows the context", async () => {
  const engine = await openEngine(storiesModelPath, { device: "cpu" });
  try {
    const context = engine.capabilities.contextSize;
    // Room for a short prompt only, so thirty turns cannot all fit.
    const maxTokens = context - 300;
    const session = new ChatSession(engine, settings({ maxTokens }));
    assert.equal(session.style, "plain");
    for (let i = 0; i < 30; i++) {
      session.messages.push({ role: "user", content: `Tim found ${i} red stones by the river.` });
      session.messages.push({ role: "assistant", content: " He was very happy and ran home." });
    }
    session.messages.push({ role: "user", content: "The end" });
    const prompt = session.buildPrompt();
    assert.ok(session.droppedTurns > 0);
    assert.ok(engine.tokenize(prompt, { addSpecial: true }).length <= context - maxTokens);
    assert.ok(prompt.endsWith("\nThe end"));
    assert.ok(prompt.startsWith("Tim found"), prompt.slice(0, 40));
  } finally {
    engine.dispose();
  }
});
