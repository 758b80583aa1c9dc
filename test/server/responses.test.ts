// Stream chunks that carry only text are spliced from a head and a tail made once per choice:
// they must be the very JSON the chunk builder makes, whatever the text holds.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Choice } from "../../src/server/choice.js";
import { chunkBody, textChunkJson, type ResponseMeta } from "../../src/server/responses.js";

const meta: ResponseMeta = {
  id: "chatcmpl-1",
  created: 1795416216,
  model: 'odd "model" \\ name',
  promptTokens: 3,
  cachedTokens: 0,
};

test("a text-only chunk spliced from its head and tail is the JSON of the chunk body", () => {
  for (const endpoint of ["chat", "text"] as const) {
    const choice = new Choice(2, [], false, false);
    const make = textChunkJson(endpoint, meta, choice);
    for (const content of ['say "hi"\n', "\u0000text\u0000", "é ✓ \ud83d\ude00 \\", " 42"]) {
      const body = chunkBody(
        endpoint,
        meta,
        choice,
        { content, events: [], logprobs: [] },
        { first: false, finished: false, wantLogprobs: false, textOffset: 0 },
      );
      assert.equal(make(content), JSON.stringify(body));
      const parsed = JSON.parse(make(content));
      assert.equal(
        endpoint === "chat" ? parsed.choices[0].delta.content : parsed.choices[0].text,
        content,
      );
      assert.equal(parsed.choices[0].index, 2);
    }
  }
});
