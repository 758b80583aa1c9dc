// Few-shot prompt files: parsing (the task slot filled, the first k examples used), the usage
// errors that name file:line, the shipped eval/prompts/seeds-c-regions.txt (every example's region
// run by the VM and its written result checked), and `ruffian eval --few-shot 0,3 --prompt-file`
// end to end on a random-weight model with the real Qwen2 vocabulary and a 32K context.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  checkShotCounts,
  fillPrompt,
  parsePromptFile,
  readPromptFile,
} from "../../src/eval/prompt-file.js";
import { longestPrompts, promptFilePrompt } from "../../src/eval/few-shot.js";
import { gradeTranscript, regionsOf } from "../../src/eval/grade.js";
import { runC } from "../../src/vm/index.js";
import { ensureRealVocabModel } from "../../src/models/real-vocab-model.js";
import { openEngine } from "../../src/engine/open.js";
import { packageRoot } from "../../src/paths.js";
import { ruffian, withTempDir } from "./helpers.js";

const shipped = join(packageRoot, "eval", "prompts", "seeds-c-regions.txt");
const setPath = join(packageRoot, "eval", "algorithm-questions.jsonl");

const small = [
  "# a comment, dropped",
  "Compute with [C: ...].",
  "[EXAMPLES]",
  "",
  "Q: [YOUR TASK]",
  "A:",
  "[EXAMPLE]",
  "Q: one?",
  "A: [C: 1] = VM[1]. One.",
  "",
  "[EXAMPLE]",
  "Q: two?",
  "A: [C: 1+1] = VM[2]. Two.",
  "[EXAMPLE]",
  "Q: three?",
  "A: [C: 1+2] = VM[3]. Three.",
  "",
].join("\n");

test("a prompt file's task slot takes the question and its [EXAMPLES] line the first k examples", () => {
  const file = parsePromptFile("small.txt", small);
  assert.deepEqual(
    file.examples.map((e) => [e.line, e.text]),
    [
      [7, "Q: one?\nA: [C: 1] = VM[1]. One."],
      [11, "Q: two?\nA: [C: 1+1] = VM[2]. Two."],
      [14, "Q: three?\nA: [C: 1+2] = VM[3]. Three."],
    ],
  );
  assert.equal(file.taskPrefix, "Q:");
  assert.equal(
    fillPrompt(file, 0, "What is 6*7?"),
    "Compute with [C: ...].\n\nQ: What is 6*7?\nA:",
  );
  assert.equal(
    fillPrompt(file, 2, "What is 6*7?"),
    "Compute with [C: ...].\nQ: one?\nA: [C: 1] = VM[1]. One.\n\nQ: two?\nA: [C: 1+1] = VM[2]. Two.\n\nQ: What is 6*7?\nA:",
  );
  // The shipped file: k examples in, in order, and the question where [YOUR TASK] was.
  const seeds = readPromptFile(shipped);
  for (const k of [0, 3, 10]) {
    const text = fillPrompt(seeds, k, "What is 9 factorial?");
    assert.equal((text.match(/^User: /gm) ?? []).length, k + 1, `${k} examples and the task`);
    assert.ok(text.endsWith("User: What is 9 factorial?\nAssistant:"));
    assert.doesNotMatch(text, /\[YOUR TASK\]|\[EXAMPLES?\]|^#/m);
    for (const ex of seeds.examples.slice(0, k)) assert.ok(text.includes(ex.text));
    for (const ex of seeds.examples.slice(k)) assert.ok(!text.includes(ex.text));
  }
  checkShotCounts(seeds, [0, 3, 10, seeds.examples.length]);
});

test("the shipped prompt's examples: at least 10, over factorial, Fibonacci and gcd, each result the VM's", () => {
  const file = readPromptFile(shipped);
  assert.ok(file.examples.length >= 10, `${file.examples.length} examples`);
  for (const topic of [/factorial/, /Fibonacci/, /greatest common divisor|gcd/]) {
    assert.ok(file.examples.filter((e) => topic.test(e.text)).length >= 2, String(topic));
  }
  for (const ex of file.examples) {
    const regions = regionsOf(ex.text);
    assert.equal(regions.length, 1, `line ${ex.line}: one region`);
    const outcome = runC(regions[0]!.source);
    assert.ok(outcome.ok, `line ${ex.line}: ${regions[0]!.source}`);
    assert.equal(regions[0]!.result, outcome.text, `line ${ex.line}: the written VM[…] result`);
    // Each example ends the way the grader wants an answer to: a sentence stating the result.
    const question = /^User: (.*)$/m.exec(ex.text)![1]!;
    const answer = ex.text.slice(ex.text.indexOf("Assistant: "));
    const grade = gradeTranscript({ task: "example", question, result: outcome.text }, answer);
    assert.deepEqual(grade, { wroteRegion: true, ran: true, correct: true }, `line ${ex.line}`);
  }
});

test("a bad prompt file is a usage error naming file:line and the problem", () => {
  const bad = (source: string) => {
    try {
      checkShotCounts(parsePromptFile("p.txt", source), [0, 2]);
    } catch (err) {
      return (err as Error).message;
    }
    return "accepted";
  };
  assert.equal(
    bad("Intro\n[EXAMPLES]\nQ:\n[EXAMPLE]\nQ: a\n"),
    "p.txt:3: the prompt (up to this line) has no [YOUR TASK] slot for the question",
  );
  assert.match(
    bad("[YOUR TASK]\nand [YOUR TASK]\n"),
    /^p\.txt:2: a second \[YOUR TASK\] slot \(the first is on line 1\)/,
  );
  assert.match(
    bad("Examples: [EXAMPLES]\n[YOUR TASK]\n"),
    /^p\.txt:1: \[EXAMPLES\] must be alone on its line/,
  );
  assert.match(
    bad("[YOUR TASK]\n[EXAMPLE]\nQ: a\n"),
    /^p\.txt:1: the prompt \(up to this line\) has no \[EXAMPLES\] line, but --few-shot asks for 2 examples/,
  );
  assert.equal(
    bad("[EXAMPLES]\n[YOUR TASK]\n[EXAMPLE]\nQ: a\n"),
    "p.txt:3: 1 example from this line on, but --few-shot asks for 2",
  );
  assert.match(
    bad("[EXAMPLES]\n[YOUR TASK]\n"),
    /^p\.txt:2: no \[EXAMPLE\] examples, but --few-shot asks for 2/,
  );
  assert.match(
    bad("[EXAMPLES]\n[YOUR TASK]\n[EXAMPLE]\nQ: [YOUR TASK]\n"),
    /^p\.txt:4: \[YOUR TASK\] inside an example \(example of line 3\)/,
  );
  assert.match(
    bad("[EXAMPLES]\n[YOUR TASK]\n[EXAMPLE]\n\n[EXAMPLE]\nQ: b\n"),
    /^p\.txt:3: this example is empty/,
  );
  assert.equal(bad("[EXAMPLES]\n[YOUR TASK]\n[EXAMPLE]\nQ: a\n[EXAMPLE]\nQ: b\n"), "accepted");

  // Through the CLI: exit status 2, the file's own path and line, no stack trace, nothing run.
  withTempDir((dir) => {
    const path = join(dir, "short.txt");
    writeFileSync(
      path,
      "Solve it.\n[EXAMPLES]\nUser: [YOUR TASK]\n[EXAMPLE]\nUser: a\n[EXAMPLE]\nUser: b\n",
    );
    const tooFew = ruffian("eval", "--few-shot", "0,3", "--prompt-file", path, "--limit", "1");
    assert.equal(tooFew.code, 2, tooFew.stderr);
    assert.equal(
      tooFew.stderr,
      `ruffian: ${path}:4: 2 examples from this line on, but --few-shot asks for 3\n`,
    );
    writeFileSync(path, "Solve it.\n[EXAMPLES]\n\nUser:\n");
    const noSlot = ruffian("eval", "--few-shot", "0", "--prompt-file", path);
    assert.equal(noSlot.code, 2, noSlot.stderr);
    assert.equal(
      noSlot.stderr,
      `ruffian: ${path}:4: the prompt (up to this line) has no [YOUR TASK] slot for the question\n`,
    );
    const missing = ruffian("eval", "--few-shot", "0", "--prompt-file", join(dir, "absent.txt"));
    assert.equal(missing.code, 2, missing.stderr);
    assert.match(missing.stderr, /^ruffian: .*absent\.txt:1: cannot read the prompt file \(ENOENT/);
    const alone = ruffian("eval", "--prompt-file", shipped);
    assert.equal(alone.code, 2);
    assert.match(
      alone.stderr,
      /--prompt-file is the prompt of a --few-shot run: give --few-shot too/,
    );
  });
});

test("ruffian eval --few-shot 0,3 --prompt-file runs end to end on a random-weight Qwen2-vocabulary model", async () => {
  const model = await ensureRealVocabModel({ vocabulary: "qwen2" });
  // The 10-example prompt fits the model's 32K context (and is far past ruffian-nano's 256).
  const engine = await openEngine(model, { contextSize: 512, glassBox: false });
  const file = readPromptFile(shipped);
  try {
    assert.equal(engine.model.trainContextSize, 32768);
    const [ten] = longestPrompts(
      engine,
      [{ task: "t", question: "What is 9 factorial?", result: "362880" }],
      [10],
      (k, q) => promptFilePrompt(engine, file, k, q),
    );
    assert.ok(ten!.tokens > 256 && ten!.tokens < 32768, `${ten!.tokens} tokens`);
    const { prompt, stop } = promptFilePrompt(engine, file, 3, "What is 9 factorial?");
    assert.match(
      prompt,
      /^<\|im_start\|>system\nYou are a helpful assistant<\|im_end\|>\n<\|im_start\|>user\n[\s\S]*User: What is 9 factorial\?\nAssistant:<\|im_end\|>\n<\|im_start\|>assistant\n$/,
    );
    assert.deepEqual(stop, ["\nUser:"]);
  } finally {
    engine.dispose();
  }
  withTempDir((dir) => {
    const plot = join(dir, "few-shot.svg");
    const r = ruffian(
      "eval",
      "--few-shot",
      "0,3",
      "--prompt-file",
      shipped,
      "--model",
      model,
      "--questions",
      setPath,
      "--limit",
      "2",
      "-n",
      "16",
      "--parallel",
      "2",
      "--plot",
      plot,
    );
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split("\n");
    assert.equal(
      lines[0],
      "| examples | n | region written | compiled and ran | final answer right |",
    );
    assert.match(lines[2]!, /^\| 0 \| 2 \| \d+\.\d% \| \d+\.\d% \| \d+\.\d% \|$/);
    assert.match(lines[3]!, /^\| 3 \| 2 \| \d+\.\d% \| \d+\.\d% \| \d+\.\d% \|$/);
    assert.equal(lines[4], "");
    assert.match(
      lines[5]!,
      /^note: random-qwen2 has random weights: these rates measure the machinery .*, not a model\.$/,
    );
    assert.match(r.stderr, /3 examples: 2\/2/);
    assert.ok(existsSync(plot));
    assert.match(readFileSync(plot, "utf8"), /prompt seeds-c-regions\.txt/);
    assert.equal((readFileSync(plot, "utf8").match(/<polyline /g) ?? []).length, 3);
  });
  // ruffian-nano's 256-token context cannot take the shipped prompt: a clear refusal.
  const nano = ruffian(
    "eval",
    "--few-shot",
    "0,10",
    "--prompt-file",
    shipped,
    "--model",
    join(packageRoot, "models", "ruffian-nano.gguf"),
    "--limit",
    "1",
  );
  assert.equal(nano.code, 1, nano.stderr);
  assert.match(
    nano.stderr,
    /^ruffian: the few-shot prompt of .*seeds-c-regions\.txt does not fit the model's context: .*10 examples take \d+ tokens .* but the context of ruffian-nano\.gguf is 256 tokens\./,
  );
});
