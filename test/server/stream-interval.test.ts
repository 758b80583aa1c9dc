// How a stream's chunks are cut (`--stream-interval`): with 0 every sampled token leaves in its
// own chunk; with a long interval the tokens sampled within one write's window leave as one
// chunk. Either way the client assembles the same text, and a usage chunk ends the stream.
import { test } from "node:test";
import assert from "node:assert/strict";
import { nanoModelPath, storiesModelPath } from "../../src/paths.js";
import { client, greedyStoryStream, question, serve } from "./helpers.js";

async function streamStory(streamIntervalMs: number) {
  const server = await serve({ model: storiesModelPath, slots: 1, streamIntervalMs });
  try {
    const stream = await client(server).completions.create(greedyStoryStream);
    let text = "";
    let textChunks = 0;
    let completionTokens = -1;
    for await (const chunk of stream) {
      const piece = chunk.choices[0]?.text ?? "";
      if (piece !== "") textChunks++;
      text += piece;
      if (chunk.usage) completionTokens = chunk.usage.completion_tokens;
    }
    return { text, textChunks, completionTokens };
  } finally {
    await server.close();
  }
}

test("--stream-interval 0 sends each token in its own chunk; a long interval gathers them, same text", async () => {
  const each = await streamStory(0);
  assert.ok(each.completionTokens > 8, `a story of ${each.completionTokens} tokens`);
  assert.equal(each.textChunks, each.completionTokens);
  const gathered = await streamStory(1000);
  assert.equal(gathered.text, each.text);
  assert.equal(gathered.completionTokens, each.completionTokens);
  // The first token leaves at once, the rest within the second's window (or at the end).
  assert.ok(gathered.textChunks >= 2, `${gathered.textChunks} chunks`);
  assert.ok(
    gathered.textChunks < each.completionTokens / 4,
    `${gathered.textChunks} chunks for ${each.completionTokens} tokens`,
  );
});

test("with a long interval, a region's injected result still leaves in a chunk of its own", async () => {
  const server = await serve({ model: nanoModelPath, slots: 1, streamIntervalMs: 1000 });
  try {
    const stream = await client(server).chat.completions.create({
      model: "ruffian-nano",
      messages: [{ role: "user", content: question(4821, 377) }],
      temperature: 0,
      stream: true,
    });
    const pieces: string[] = [];
    for await (const chunk of stream) {
      const piece = chunk.choices[0]?.delta?.content ?? "";
      if (piece !== "") pieces.push(piece);
    }
    assert.match(pieces.join(""), /\[C: 4821\s*\*\s*377\] = VM\[1817517\]/);
    // A client tells injected text from the sampled tokens' text by its chunk: the text before
    // it went out first, and what the model samples after it goes out later.
    const result = pieces.find((p) => p.includes("1817517"));
    assert.match(result ?? "", /^(?: = VM\[)?1817517\]$/, JSON.stringify(pieces));
  } finally {
    await server.close();
  }
});

test("a stream that ends at its first step still gets its chunk, finish_reason and usage", async () => {
  // The decode worker sends a request's acceptance with its first step's events: here the
  // request's end too (the first token is cut by the stop string), before the stream is open.
  const server = await serve({ model: storiesModelPath, slots: 1 });
  try {
    const body = { model: "stories260K", prompt: "Once upon a time", stop: [","], temperature: 0 };
    const whole = await client(server).completions.create({ ...body, stream: false });
    assert.equal(whole.choices[0]?.finish_reason, "stop");
    const stream = await client(server).completions.create({
      ...body,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let finish: string | null | undefined;
    let completionTokens = -1;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.text ?? "";
      finish ??= chunk.choices[0]?.finish_reason;
      if (chunk.usage) completionTokens = chunk.usage.completion_tokens;
    }
    assert.equal(finish, "stop");
    assert.equal(text, whole.choices[0]?.text);
    assert.equal(completionTokens, whole.usage?.completion_tokens);
  } finally {
    await server.close();
  }
});
