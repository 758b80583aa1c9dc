// Regions over real tokens: for each real vocabulary (Qwen2, Llama 3, Phi-3, DeepSeek-Coder,
// GPT-2) a random-weight model is forced to write text cut into tokens as its own tokenizer cuts
// it, and the real decode loop detects, runs and injects the regions in it. The tokenizers merge
// characters in ways a hand-made vocabulary does not ("[C", ")]", "].", "]\n", "`\n"), and the
// loop must find regions however they fall across tokens, cut a token that runs past a region's
// end, let stop strings and regions meet without breaking either, feed the model the tokens its
// tokenizer gives for the text it sees, and never run what the prompt holds.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { openEngine } from "../../src/engine/open.js";
import type { Engine } from "../../src/engine/types.js";
import { ensureRealVocabModel } from "../../src/models/real-vocab-model.js";
import { REAL_VOCABULARIES, type RealVocabulary } from "../../src/models/llama-vocab-files.js";
import { continuationTokens } from "../../src/decode/continuation.js";
import { cachedTokens } from "../../src/decode/loop.js";
import { renderPrompt } from "../../src/decode/prompt.js";
import type { DecodeEvent } from "../../src/decode/events.js";
import { finalText, forcedTokens } from "./forcing.js";

const engines = new Map<RealVocabulary, Engine>();
after(() => {
  for (const engine of engines.values()) engine.dispose();
});

async function engineFor(vocabulary: RealVocabulary): Promise<Engine> {
  let engine = engines.get(vocabulary);
  if (!engine) {
    engine = await openEngine(await ensureRealVocabModel({ vocabulary }), {
      device: "cpu",
      contextSize: 512,
    });
    engines.set(vocabulary, engine);
  }
  return engine;
}

/** The tokens of `text` as the tokenizer cuts it when it follows earlier text (what the loop
 * uses for injections; for SentencePiece, without the space put in front of a text's start). */
function split(engine: Engine, text: string): number[] {
  const ids = continuationTokens(engine, text);
  assert.equal(ids.map((id) => engine.tokenText(id)).join(""), text);
  return ids;
}

const texts = (engine: Engine, ids: readonly number[]): string[] =>
  ids.map((id) => engine.tokenText(id));

function regionRuns(events: readonly DecodeEvent[]) {
  return events.flatMap((e) => (e.type === "vm" && e.origin === "region" ? [e] : []));
}

function injections(events: readonly DecodeEvent[]) {
  return events.flatMap((e) => (e.type === "injection" ? [e] : []));
}

function done(events: readonly DecodeEvent[]) {
  const d = events.find((e) => e.type === "done");
  assert.ok(d && d.type === "done");
  return d;
}

/** The tokens the loop evaluated after the prompt of the generation that gave `events`. */
function fedTokens(engine: Engine, events: readonly DecodeEvent[]): number[] {
  return cachedTokens(engine, 0).slice(done(events).stats.promptTokens);
}

/** Which of these texts the tokenizer writes with `]` merged into the token that follows. */
const MERGES_AFTER_BRACKET: Record<RealVocabulary, { dot: boolean; newline: boolean }> = {
  qwen2: { dot: true, newline: true },
  "llama-bpe": { dot: true, newline: true },
  "phi-3": { dot: true, newline: false },
  "deepseek-coder": { dot: true, newline: false },
  "gpt-2": { dot: true, newline: false },
};

for (const vocabulary of REAL_VOCABULARIES) {
  test(`${vocabulary}: [C: …], [CALC: …], [LISP: …] and a \`\`\`c fence, cut by the tokenizer, run and get their results`, async () => {
    const engine = await engineFor(vocabulary);
    const cases = [
      {
        text: "The product is [C: 847*293] so",
        language: "c",
        result: "248171",
        expect: "The product is [C: 847*293] = VM[248171] so",
      },
      {
        text: "Six sevens: [CALC: 7*6] ok",
        language: "calc",
        result: "42",
        expect: "Six sevens: [CALC: 7*6] = VM[42] ok",
      },
      {
        text: "Sum [LISP: (+ 1 2)] ok",
        language: "lisp",
        result: "3",
        expect: "Sum [LISP: (+ 1 2)] = VM[3] ok",
      },
      {
        text: 'Run:\n```c\nint main() { printf("%d", 6*7); return 0; }\n```\nok',
        language: "c",
        result: "42",
        expect:
          'Run:\n```c\nint main() { printf("%d", 6*7); return 0; }\n```\n```output\n42\n```\n',
      },
    ];
    for (const c of cases) {
      const ids = split(engine, c.text);
      assert.ok(ids.length < c.text.length, `${JSON.stringify(c.text)}: no characters merged`);
      const events = await forcedTokens(engine, ids);
      const runs = regionRuns(events);
      assert.equal(
        runs.length,
        1,
        `${JSON.stringify(c.text)} as ${JSON.stringify(texts(engine, ids))}`,
      );
      const run = runs[0]!;
      assert.equal(run.language, c.language);
      assert.ok(run.outcome.ok, run.outcome.ok ? "" : run.outcome.error.message);
      assert.equal(run.outcome.text.trim(), c.result);
      assert.equal(injections(events).length, 1);
      const text = finalText(events);
      assert.ok(text.startsWith(c.expect), `${JSON.stringify(text)} for ${JSON.stringify(c.text)}`);
    }
  });

  test(`${vocabulary}: a token merging \`]\` with what follows is cut there, and the result follows the \`]\``, async () => {
    const engine = await engineFor(vocabulary);
    for (const [after, key] of [
      [".", "dot"],
      ["\n", "newline"],
    ] as const) {
      const text = `Then [C: 6*7]${after}Next`;
      const ids = split(engine, text);
      const pieces = texts(engine, ids);
      const closing = pieces.findIndex((p) => p.includes("]"));
      const merged = pieces[closing] !== "]";
      assert.equal(merged, MERGES_AFTER_BRACKET[vocabulary][key], JSON.stringify(pieces));
      if (merged) assert.ok(pieces[closing]!.startsWith("]" + after), JSON.stringify(pieces));
      const events = await forcedTokens(engine, ids);
      // The closing token's event shows only the part up to the region's end; that part is what
      // the model was fed (re-tokenized), then the injection.
      const tokenEvents = events.flatMap((e) => (e.type === "token" ? [e] : []));
      assert.equal(tokenEvents[closing]!.text, "]");
      assert.equal(tokenEvents[closing]!.id, ids[closing]);
      const runs = regionRuns(events);
      assert.equal(runs.length, 1, JSON.stringify(pieces));
      assert.equal(runs[0]!.outcome.ok && runs[0]!.outcome.text, "42");
      const [inj] = injections(events);
      assert.equal(inj?.text, " = VM[42]");
      // The characters after `]` in the merged token were dropped; the model wrote the rest.
      const rest = merged ? "Next" : after + "Next";
      assert.ok(
        finalText(events).startsWith("Then [C: 6*7] = VM[42]" + rest),
        JSON.stringify(finalText(events)),
      );
      // What the model was fed up to the result's end is how its tokenizer cuts that text.
      const fed = fedTokens(engine, events);
      const seen = split(engine, "Then [C: 6*7] = VM[42]");
      assert.deepEqual(texts(engine, fed.slice(0, seen.length)), texts(engine, seen));
      assert.deepEqual(fed.slice(0, seen.length), seen);
    }
  });

  test(`${vocabulary}: stop strings that meet a region neither break it nor leave stop text`, async () => {
    const engine = await engineFor(vocabulary);
    const ids = split(engine, "Then [C: 6*7]. Next");
    // Stop strings that only partly match the region, match the runtime's own injected text, or
    // would be completed by the characters cut off the closing token: the region runs, the
    // result is injected whole and the generation goes on.
    const goOn = await forcedTokens(engine, ids, {
      stop: ["6*7)", "*7]!", " = VM", "VM[42]", "]."],
    });
    assert.equal(regionRuns(goOn).length, 1);
    assert.equal(injections(goOn)[0]?.text, " = VM[42]");
    assert.notEqual(done(goOn).reason, "stop");
    assert.ok(
      finalText(goOn).startsWith("Then [C: 6*7] = VM[42] Next"),
      JSON.stringify(finalText(goOn)),
    );
    // A stop string that ends at the region's `]`, inside the closing token: generation ends
    // there, with the stop text cut off, and the region it completed neither runs nor is
    // injected.
    for (const stop of ["7]", "*7]"]) {
      const stopped = await forcedTokens(engine, ids, { stop: [stop] });
      assert.equal(done(stopped).reason, "stop");
      assert.equal(finalText(stopped), "Then [C: 6*7]".slice(0, -stop.length));
      assert.equal(regionRuns(stopped).length, 0, stop);
      assert.equal(injections(stopped).length, 0, stop);
    }
    // A stop string inside the region's source: the region never closes.
    const early = await forcedTokens(engine, ids, { stop: ["6*"] });
    assert.equal(done(early).reason, "stop");
    assert.equal(finalText(early), "Then [C: ");
    assert.equal(regionRuns(early).length, 0);
    assert.equal(count(early, "region-end"), 0);
  });

  test(`${vocabulary}: the injected tokens are the tokenizer's own tokens for the text the model sees`, async () => {
    const engine = await engineFor(vocabulary);
    const text = "The product is [C: 847*293] so";
    const ids = split(engine, text);
    const events = await forcedTokens(engine, ids);
    const [inj] = injections(events);
    assert.ok(inj);
    assert.equal(inj.text, " = VM[248171]");
    assert.deepEqual(inj.tokens, split(engine, " = VM[248171]"));
    // Everything fed after the prompt, the model's tokens and the injected ones, is how the
    // tokenizer cuts the visible text as a whole.
    const visible = "The product is [C: 847*293] = VM[248171] so";
    const whole = split(engine, visible);
    const fed = fedTokens(engine, events);
    assert.deepEqual(
      texts(engine, fed.slice(0, whole.length)),
      texts(engine, whole),
      "fed tokens against the tokenization of the whole text",
    );
    assert.deepEqual(fed.slice(0, whole.length), whole);
  });

  test(`${vocabulary}: regions in a prompt rendered with the model's chat template never run`, async () => {
    const engine = await engineFor(vocabulary);
    const templated =
      vocabulary === "qwen2" || vocabulary === "llama-bpe" || vocabulary === "phi-3";
    assert.equal(engine.model.chatTemplate !== undefined, templated);
    const prompt = renderPrompt(engine, [
      {
        role: "user",
        content:
          "What is [C: 1+1]? And ```c\nint main(){return 3;}\n``` or [CALC: 7*6] or [LISP: (+ 1 2)]? Finish this: [C: 2+",
      },
    ]);
    assert.ok(prompt.includes("[C: 1+1]"));
    if (templated) assert.notEqual(prompt, renderPrompt(engine, [{ role: "user", content: "x" }]));
    // Ordinary text, and a `]` that would close the region the prompt left open.
    const ids = split(engine, "It is two. 2] is what I get.");
    const events = await forcedTokens(engine, ids, { prompt });
    assert.equal(regionRuns(events).length, 0);
    assert.equal(count(events, "region-start"), 0);
    assert.equal(injections(events).length, 0);
    assert.ok(finalText(events).startsWith("It is two. 2] is what I get."));
    // The same text with the region's start written by the model does run: the prompt's
    // unfinished region is what kept it quiet.
    const own = await forcedTokens(engine, split(engine, "[C: 2+2] is what I get."), { prompt });
    assert.equal(regionRuns(own).length, 1);
  });
}

function count(list: readonly DecodeEvent[], type: DecodeEvent["type"]): number {
  return list.filter((e) => e.type === type).length;
}
