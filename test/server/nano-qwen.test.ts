// `ruffian serve --model models/ruffian-nano-qwen.gguf` as a user runs it: the official openai
// client's chat request is rendered by the model's own ChatML template (Qwen's default system turn
// included: the prompt's token count is that text's), the model writes a [C: …] region that the
// server computes in-band, and the turn ends on <|im_end|> — streaming and not.
import { test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { getLlama, LlamaLogLevel } from "node-llama-cpp";
import { nanoQwenModelPath } from "../../src/paths.js";
import { spawnServe } from "./helpers.js";

const question = "What is 4821 times 377?";

/** Tokens of the ChatML text Qwen's template writes for one user turn (and a system turn). */
async function chatmlTokenCount(system: string, user: string): Promise<number> {
  const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
  const model = await llama.loadModel({ modelPath: nanoQwenModelPath, vocabOnly: true });
  try {
    const text =
      `<|im_start|>system\n${system}<|im_end|>\n` +
      `<|im_start|>user\n${user}<|im_end|>\n<|im_start|>assistant\n`;
    return model.tokenize(text, true).length;
  } finally {
    await model.dispose();
  }
}

test("ruffian serve on ruffian-nano-qwen: the openai client's chat answer computes 4821×377 in-band through ChatML", async () => {
  const { child, url, stdout } = await spawnServe(["--model", nanoQwenModelPath, "--port", "0"]);
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  try {
    assert.match(stdout, /model ruffian-nano-qwen/);
    const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: "unused", maxRetries: 0 });

    const reply = await openai.chat.completions.create({
      model: "ruffian-nano-qwen",
      messages: [{ role: "user", content: question }],
      temperature: 0,
      max_tokens: 80,
    });
    const text = reply.choices[0]!.message.content ?? "";
    assert.match(text, /\[C: 4821\s*\*\s*377\] = VM\[1817517\]/);
    assert.match(
      text.slice(text.indexOf("VM[1817517]") + 11),
      /1817517/,
      "the answer uses the result",
    );
    assert.doesNotMatch(text, /<\|im_end\|>|<\|im_start\|>/);
    assert.equal(reply.choices[0]!.finish_reason, "stop", "the turn ended on <|im_end|>");
    // Qwen's template adds its default system turn when the conversation has none.
    assert.equal(
      reply.usage?.prompt_tokens,
      await chatmlTokenCount("You are a helpful assistant", question),
    );

    const withSystem = await openai.chat.completions.create({
      model: "ruffian-nano-qwen",
      messages: [
        { role: "system", content: "Answer briefly." },
        { role: "user", content: question },
      ],
      temperature: 0,
      max_tokens: 80,
    });
    assert.equal(
      withSystem.usage?.prompt_tokens,
      await chatmlTokenCount("Answer briefly.", question),
    );
    assert.match(withSystem.choices[0]!.message.content ?? "", /VM\[1817517\]/);

    const stream = await openai.chat.completions.create({
      model: "ruffian-nano-qwen",
      messages: [{ role: "user", content: question }],
      temperature: 0,
      max_tokens: 80,
      stream: true,
    });
    let streamed = "";
    let finish: string | null = null;
    for await (const chunk of stream) {
      streamed += chunk.choices[0]?.delta?.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    assert.equal(streamed, text, "streaming writes the same answer");
    assert.equal(finish, "stop");
  } finally {
    child.kill("SIGTERM");
    await exited;
  }
});
