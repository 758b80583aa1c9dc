// `--chat-template FILE` on run, chat and serve: a missing file or a template Jinja cannot parse
// is a usage error (exit 2) naming the file, without a stack trace, before any model loads; a
// good file replaces the model's tokenizer.chat_template — the prompt `run` decodes (the done
// event's promptTokens in --events) is the override's text, not the model's ChatML.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureRealVocabModel } from "../../src/models/real-vocab-model.js";
import { openEngine, type LlamaEngine } from "../../src/engine/open.js";
import { nanoModelPath } from "../../src/paths.js";
import { ruffian } from "./chat-helpers.js";

const tmp = mkdtempSync(join(tmpdir(), "ruffian-template-"));
let model: string;
let engine: LlamaEngine;
before(async () => {
  model = await ensureRealVocabModel({ vocabulary: "qwen2" });
  engine = await openEngine(model, { contextSize: 512 });
});
after(() => {
  engine.dispose();
  rmSync(tmp, { recursive: true, force: true });
});

const noStackTrace = (stderr: string) => assert.doesNotMatch(stderr, /^\s+at .+[:(]/m, stderr);
const file = (name: string, text: string) => {
  const path = join(tmp, name);
  writeFileSync(path, text);
  return path;
};
const commands: string[][] = [
  ["run", "-p", "hi"],
  ["chat", "--no-tty"],
  ["serve", "--port", "0"],
];

test("a missing --chat-template file exits 2 naming the file, for run, chat and serve", () => {
  const missing = join(tmp, "nope.jinja");
  for (const command of commands) {
    const r = ruffian([...command, "-m", model, "--chat-template", missing]);
    assert.equal(r.code, 2, `${command[0]}: ${r.stderr}`);
    assert.match(
      r.stderr,
      /--chat-template: cannot read .*nope\.jinja: no such file or directory/,
      command[0],
    );
    assert.equal(r.stdout, "", command[0]);
    noStackTrace(r.stderr);
  }
});

test("a template Jinja cannot parse exits 2 with the file and the parser's message", () => {
  const bad = file("bad.jinja", "{% for %}{{ m }}{% endfor %}");
  const unclosed = file("unclosed.jinja", "{% if messages %}hi");
  for (const command of commands) {
    const r = ruffian([...command, "-m", model, "--chat-template", bad]);
    assert.equal(r.code, 2, `${command[0]}: ${r.stderr}`);
    assert.match(
      r.stderr,
      /--chat-template: .*bad\.jinja is not a Jinja template this can render: Unexpected token/,
      command[0],
    );
    assert.equal(r.stdout, "", command[0]);
    noStackTrace(r.stderr);
  }
  const r = ruffian(["run", "-p", "hi", "-m", model, "--chat-template", unclosed]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /unclosed\.jinja is not a Jinja template .*an unclosed \{% if %\}/);
});

/** `ruffian run` for one token; the prompt's token count from the done event. */
function promptTokens(...extra: string[]): number {
  return promptTokensOf(model, ...extra);
}
function promptTokensOf(modelPath: string, ...extra: string[]): number {
  const events = join(tmp, `events-${Math.random().toString(36).slice(2)}.jsonl`);
  const r = ruffian([
    "run",
    "-m",
    modelPath,
    "-p",
    "Hello there",
    "-n",
    "1",
    "--events",
    events,
    ...extra,
  ]);
  assert.equal(r.code, 0, r.stderr);
  const done = readFileSync(events, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { type: string; stats?: { promptTokens: number } })
    .find((e) => e.type === "done");
  return done!.stats!.promptTokens;
}
const length = (text: string) =>
  engine.tokenize(text, { addSpecial: true, parseSpecial: true }).length;

test("--chat-template replaces the model's template in the prompt run decodes", () => {
  const override = file(
    "marker.jinja",
    "{% for m in messages %}<|im_start|>{{ m.role }}\nOVERRIDE MARKER {{ m.content }}<|im_end|>\n" +
      "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}",
  );
  const own = promptTokens();
  const replaced = promptTokens("--chat-template", override);
  assert.equal(
    own,
    length(
      "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n" +
        "<|im_start|>user\nHello there<|im_end|>\n<|im_start|>assistant\n",
    ),
  );
  assert.equal(
    replaced,
    length("<|im_start|>user\nOVERRIDE MARKER Hello there<|im_end|>\n<|im_start|>assistant\n"),
  );
  assert.notEqual(own, replaced);
});

test("chat runs with a --chat-template override", () => {
  const override = file(
    "plain.jinja",
    "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}assistant:",
  );
  const r = ruffian(
    ["chat", "--no-tty", "-m", model, "-n", "2", "--chat-template", override],
    "hi\n",
  );
  assert.equal(r.code, 0, r.stderr);
  noStackTrace(r.stderr);
});

test("ruffian-nano's Q:/A: format gives way to a --chat-template override", async () => {
  const override = file("nano.jinja", "{% for m in messages %}<<{{ m.content }}>>{% endfor %}");
  const nano = await openEngine(nanoModelPath, { contextSize: 256 });
  try {
    const own = promptTokensOf(nanoModelPath);
    const replaced = promptTokensOf(nanoModelPath, "--chat-template", override);
    const expected = nano.tokenize("<<Hello there>>", { addSpecial: true, parseSpecial: true });
    assert.equal(replaced, expected.length);
    assert.notEqual(own, replaced);
  } finally {
    nano.dispose();
  }
});
