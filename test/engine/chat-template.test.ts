// Chat templates rendered as Jinja: the real-vocabulary models' own templates (Qwen2 ChatML,
// Llama 3.1, Phi-3) give exactly the text their template semantics say, written out here by
// hand; names and unparsable templates go to llama.cpp's built-in list; a template's end of turn
// ends generation in the library, also where llama.cpp does not mark it end-of-generation.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ensureRealVocabModel } from "../../src/models/real-vocab-model.js";
import { openEngine, type LlamaEngine } from "../../src/engine/open.js";
import { loadModel } from "../../src/api/model.js";
import { turnStopTokens } from "../../src/decode/prompt.js";
import { forcingHook } from "../decode/forcing.js";
import type { RealVocabulary } from "../../src/models/llama-vocab-files.js";
import type { DecodeEvent } from "../../src/decode/events.js";

async function withEngine<T>(
  vocabulary: RealVocabulary,
  fn: (engine: LlamaEngine) => T | Promise<T>,
  chatTemplate?: string,
): Promise<T> {
  const engine = await openEngine(await ensureRealVocabModel({ vocabulary }), {
    contextSize: 512,
    chatTemplate,
  });
  try {
    return await fn(engine);
  } finally {
    engine.dispose();
  }
}

const conversation = [
  { role: "system", content: "Be brief." },
  { role: "user", content: "Hi" },
  { role: "assistant", content: "Hello!" },
  { role: "user", content: "2+2?" },
];

test("qwen2: the model's ChatML template, with its default system prompt when none is given", async () => {
  await withEngine("qwen2", (engine) => {
    assert.equal(
      engine.renderChat([{ role: "user", content: "Hello" }]),
      "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n" +
        "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n",
    );
    assert.equal(
      engine.renderChat(conversation),
      "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n" +
        "<|im_start|>assistant\nHello!<|im_end|>\n<|im_start|>user\n2+2?<|im_end|>\n" +
        "<|im_start|>assistant\n",
    );
    // No generation prompt; a tool message keeps its role; "developer" (unknown to this
    // template) is the system prompt, so the default one is not added.
    assert.equal(
      engine.renderChat(
        [
          { role: "developer", content: "Dev." },
          { role: "user", content: "f()?" },
          { role: "tool", content: "42" },
        ],
        { addAssistant: false },
      ),
      "<|im_start|>system\nDev.<|im_end|>\n<|im_start|>user\nf()?<|im_end|>\n" +
        "<|im_start|>tool\n42<|im_end|>\n",
    );
  });
});

test("llama-bpe: the Llama 3.1 template (date header, trimmed contents, tool content as JSON), BOS once", async () => {
  await withEngine("llama-bpe", (engine) => {
    const header = (role: string) => `<|start_header_id|>${role}<|end_header_id|>\n\n`;
    const system =
      header("system") + "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n";
    const text = engine.renderChat([
      { role: "system", content: " Be brief. " },
      { role: "user", content: " Hi\n" },
      { role: "assistant", content: "Hello!" },
      { role: "tool", content: "42" },
      { role: "user", content: "2+2?" },
    ]);
    assert.equal(
      text,
      system +
        "Be brief.<|eot_id|>" +
        header("user") +
        "Hi<|eot_id|>" +
        header("assistant") +
        "Hello!<|eot_id|>" +
        // The template writes a tool message's content with tojson: a string gets quotes.
        header("ipython") +
        '"42"<|eot_id|>' +
        header("user") +
        "2+2?<|eot_id|>" +
        header("assistant"),
    );
    // The template starts with bos_token and the tokenizer adds BOS: the prompt has one.
    const tokens = engine.tokenize(text, { addSpecial: true, parseSpecial: true });
    assert.equal(tokens[0], engine.special.bos);
    assert.notEqual(tokens[1], engine.special.bos);
    // No system message: an empty one after the date header.
    assert.equal(
      engine.renderChat([{ role: "user", content: "Yo" }]),
      system + "<|eot_id|>" + header("user") + "Yo<|eot_id|>" + header("assistant"),
    );
  });
});

test("phi-3: the Phi-3 template (system dropped, the assistant tag after every user turn)", async () => {
  await withEngine("phi-3", (engine) => {
    assert.equal(
      engine.renderChat(conversation),
      "<|user|>\nHi<|end|>\n<|assistant|>\nHello!<|end|>\n<|user|>\n2+2?<|end|>\n<|assistant|>\n",
    );
  });
});

test("named and unparsable templates use llama.cpp's built-in list; a failing template is an error", async () => {
  await withEngine("qwen2", (engine) => {
    const chatml = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n";
    assert.equal(
      engine.renderChat([{ role: "user", content: "Hi" }], { template: "chatml" }),
      chatml,
    );
    // Not Jinja (an unclosed tag), but llama.cpp recognises ChatML by its marker.
    assert.equal(
      engine.renderChat([{ role: "user", content: "Hi" }], { template: "{% if <|im_start|>" }),
      chatml,
    );
    assert.throws(
      () => engine.renderChat([{ role: "user", content: "Hi" }], { template: "{% if x" }),
      /does not parse as Jinja.*does not recognise/,
    );
    assert.throws(
      () => engine.renderChat([{ role: "user", content: "Hi" }], { template: "no-such-template" }),
      /no built-in chat template named "no-such-template"/,
    );
    assert.throws(
      () =>
        engine.renderChat([{ role: "user", content: "Hi" }], {
          template: "{{ raise_exception('roles must alternate') }}",
        }),
      /failed to render this conversation: .*roles must alternate/,
    );
  });
});

test("an engine's chatTemplate option replaces the model's, and must parse", async () => {
  const template = "{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}";
  await withEngine(
    "qwen2",
    (engine) => {
      assert.equal(engine.model.chatTemplate, template);
      assert.equal(engine.renderChat(conversation.slice(0, 2)), "[system] Be brief.\n[user] Hi\n");
    },
    template,
  );
  await assert.rejects(
    openEngine(await ensureRealVocabModel({ vocabulary: "qwen2" }), {
      contextSize: 256,
      chatTemplate: "{% for m in messages %}",
    }),
    /the chat template is not a Jinja template/,
  );
});

/** The library's generation forced to write `ids`, then one more token of its own. */
async function forcedGenerate(
  vocabulary: RealVocabulary,
  pieces: (engine: LlamaEngine) => number[],
  chatTemplate?: string,
): Promise<Extract<DecodeEvent, { type: "done" }>> {
  const model = await loadModel(await ensureRealVocabModel({ vocabulary }), {
    contextSize: 512,
    threads: 1,
    chatTemplate,
  });
  try {
    const ids = pieces(model.engine);
    let done: DecodeEvent | undefined;
    for await (const ev of model.generate({
      prompt: "Hello",
      maxTokens: ids.length + 1,
      hook: forcingHook(ids),
    }))
      if (ev.type === "done") done = ev;
    assert.ok(done && done.type === "done");
    return done;
  } finally {
    model.dispose();
  }
}

/** The token of `text` (SentencePiece writes a leading "▁" token before " Hi": the last one). */
const one = (engine: LlamaEngine, text: string) => {
  const id = engine.tokenize(text, { addSpecial: false, parseSpecial: true }).at(-1)!;
  assert.equal(
    engine.tokenText(id, { renderSpecial: true }),
    text,
    `${JSON.stringify(text)} is one token`,
  );
  return id;
};

for (const [vocabulary, end] of [
  ["qwen2", "<|im_end|>"],
  ["llama-bpe", "<|eot_id|>"],
  ["phi-3", "<|end|>"],
] as const) {
  test(`${vocabulary}: ${end} ends the turn and is not in the text`, async () => {
    const done = await forcedGenerate(vocabulary, (engine) => {
      // llama.cpp already marks this end of turn as end-of-generation: nothing to derive.
      assert.ok(engine.isEndOfGeneration(one(engine, end)));
      assert.deepEqual(turnStopTokens(engine), []);
      return [one(engine, " Hi"), one(engine, end), one(engine, " more")];
    });
    assert.equal(done.reason, "eos");
    assert.equal(done.text, " Hi");
  });
}

test("a template's end-of-turn token that llama.cpp does not mark ends generation too", async () => {
  // Phi-3's template with turns closed by a control token that is not end-of-generation.
  const template =
    "{% for message in messages %}{% if message['role'] == 'user' %}" +
    "{{ '<|user|>\n' + message['content'] + '<|placeholder1|>\n<|assistant|>\n' }}" +
    "{% elif message['role'] == 'assistant' %}{{ message['content'] + '<|placeholder1|>\n' }}" +
    "{% endif %}{% endfor %}";
  const forced = (engine: LlamaEngine) => {
    const stop = one(engine, "<|placeholder1|>");
    assert.ok(engine.isControl(stop) && !engine.isEndOfGeneration(stop));
    return [one(engine, " Hi"), stop, one(engine, " more")];
  };
  const done = await forcedGenerate("phi-3", forced, template);
  assert.equal(done.reason, "eos");
  assert.equal(done.text, " Hi");
  // With the model's own template the same token is no stop: generation goes on past it.
  const own = await forcedGenerate("phi-3", forced);
  assert.equal(own.reason, "max-tokens");
  assert.match(own.text, /^ Hi more/);
});
