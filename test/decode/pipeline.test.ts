// Scanner → real VM (C, CALC, Lisp) → injection, run by the real decode loop (loop.ts) on a real
// model: a 32,000-token random-weight llama is forced to write text cut into tokens by its own
// tokenizer, and the loop does the rest, as it does for any model.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { openEngine } from "../../src/engine/open.js";
import { ensureRandomModel } from "../../src/nano/random-model.js";
import { continuationTokens } from "../../src/decode/continuation.js";
import { finalText, forcedTokens } from "./forcing.js";

const engine = await openEngine(await ensureRandomModel({ vocab: 32000 }), {
  device: "cpu",
  contextSize: 512,
});
after(() => engine.dispose());

/** Forces `text` (as the tokenizer cuts it) and returns the loop's text and region sources. */
async function generate(text: string): Promise<{ text: string; sources: string[] }> {
  const ids = continuationTokens(engine, text);
  assert.ok(ids.length > 1 && ids.length < text.length, "the tokenizer merged some characters");
  const events = await forcedTokens(engine, ids);
  const sources = events.flatMap((e) => (e.type === "region-end" ? [e.region.source] : []));
  return { text: finalText(events), sources };
}

test("bracket regions in every language get their result right after them", async () => {
  const { text } = await generate(
    "847 x 293 = [C: 847*293], 7*6 = [CALC:7*6] and (+ 1 (* 2 3)) is [LISP: (+ 1 (* 2 3))].",
  );
  assert.ok(
    text.startsWith(
      "847 x 293 = [C: 847*293] = VM[248171], 7*6 = [CALC:7*6] = VM[42] and (+ 1 (* 2 3)) is [LISP: (+ 1 (* 2 3))] = VM[7].",
    ),
    JSON.stringify(text),
  );
});

test("a fenced program gets an output block; errors come back with their position", async () => {
  const program =
    "int main() {\n  int s = 0;\n  for (int i = 1; i <= 100; i++) s += i;\n" +
    '  printf("%d\\n", s);\n  return 0;\n}\n';
  const { text } = await generate("Sum:\n```c\n" + program + "```\nThen [C: 1/0] done");
  assert.ok(text.includes("}\n```\n```output\n5050\n```\n"), JSON.stringify(text));
  assert.ok(
    text.includes("Then [C: 1/0] = VM[error: division by zero at 1:3] done"),
    JSON.stringify(text),
  );
});

test("brackets inside literals reach the VM intact", async () => {
  const { text, sources } = await generate('[C: char *s = "]"; return s[0];]');
  assert.deepEqual(sources, [' char *s = "]"; return s[0];']);
  assert.ok(text.startsWith('[C: char *s = "]"; return s[0];] = VM[93]'), JSON.stringify(text));
});
