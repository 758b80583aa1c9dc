// The few-shot harness: grading of hand-made transcripts (correct region, wrong one, missing one,
// one that fails to compile), the question set's answers against the VM and gcc, the worked
// examples' results, and `ruffian eval --few-shot` end to end on plain, nano and chat-template models.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gradeTranscript } from "../../src/eval/grade.js";
import { ALGORITHMS, algorithmQuestions } from "../../src/eval/algorithm-set.js";
import { FEW_SHOT_POOL, parseShotCounts } from "../../src/eval/few-shot.js";
import { runC, injectionText } from "../../src/vm/index.js";
import { randomLlamaWeights, writeLlamaGguf, type LlamaConfig } from "../../src/nano/llama-gguf.js";
import { syntheticSpmVocabulary } from "../../src/nano/random-vocab.js";
import { packageRoot } from "../../src/paths.js";
import { ruffian, withTempDir } from "./helpers.js";
import { gccAvailable, runWithGcc } from "../c/gcc-oracle.js";

const setPath = join(packageRoot, "eval", "algorithm-questions.jsonl");

/** A transcript as the runtime would leave it: the region's result is what the VM injects. */
function transcript(lead: string, code: string, tail: string): string {
  return `${lead} [C: ${code}] = VM[${injectionText(runC(code))}]. ${tail}`;
}

test("grading hand-made transcripts: correct region, wrong one, missing one, one that fails to compile", () => {
  const q = {
    task: "gcd",
    question: "What is the greatest common divisor of 252 and 198?",
    result: "18",
  };
  const euclid = "long a = 252, b = 198; while (b) { long t = a % b; a = b; b = t; } return a;";
  const correct = gradeTranscript(q, transcript("Euclid:", euclid, "The gcd is 18."));
  assert.deepEqual(correct, { wroteRegion: true, ran: true, correct: true });

  // Wrong code: it runs, the model reads its (wrong) result back, the answer is wrong.
  const wrongCode = "return 252 % 198;";
  const wrong = gradeTranscript(q, transcript("Euclid:", wrongCode, "The gcd is 54."));
  assert.deepEqual(wrong, { wroteRegion: true, ran: true, correct: false });

  // No region: a right answer from memory is still graded right, but no region was written.
  assert.deepEqual(gradeTranscript(q, "The gcd of 252 and 198 is 18."), {
    wroteRegion: false,
    ran: false,
    correct: true,
  });
  assert.deepEqual(gradeTranscript(q, "It is 252."), {
    wroteRegion: false,
    ran: false,
    correct: false,
  });

  // A region that does not compile: the VM injects an error, nothing ran.
  const broken = transcript(
    "Euclid:",
    "long a = 252 b = 198; return a;",
    "I could not compute it.",
  );
  assert.match(broken, /VM\[error: /);
  assert.deepEqual(gradeTranscript(q, broken), { wroteRegion: true, ran: false, correct: false });
  // A failed region then a fixed one: it ran, and the answer after the last result is graded.
  const retried = `${broken} Fixed: [C: ${euclid}] = VM[18]\nSo gcd(252, 198) = 18.`;
  assert.deepEqual(gradeTranscript(q, retried), { wroteRegion: true, ran: true, correct: true });
});

test("the shipped question set has 100 questions over the 46 algorithms, answers computed by the VM and gcc", () => {
  const committed = readFileSync(setPath, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  assert.equal(committed.length, 100);
  assert.equal(new Set(committed.map((q: { task: string }) => q.task)).size, 46);
  assert.deepEqual(committed, algorithmQuestions(), "regenerating through the VM gives the file");
  if (!gccAvailable())
    throw new Error("gcc is needed to cross-check the answers (apt-get install gcc)");
  // One native program holds every reference solution and prints their answers line by line.
  let program = "#include <stdio.h>\n";
  let main = "int main(void) {\n";
  ALGORITHMS.flatMap((a) => a.cases).forEach(([, body], i) => {
    program += `long solve${i}(void) { ${body} }\n`;
    main += `  printf("%ld\\n", solve${i}());\n`;
  });
  const native = runWithGcc(`${program}${main}  return 0;\n}\n`, "algorithms");
  assert.deepEqual(
    native.stdout.trim().split("\n"),
    committed.map((q: { result: string }) => q.result),
  );
  // The seeds' Project Euler answers are among them.
  const pe = Object.fromEntries(
    committed.map((q: { question: string; result: string }) => [q.question, q.result]),
  );
  assert.equal(pe["What is the sum of all the multiples of 3 or 5 below 1000?"], "233168");
  assert.equal(pe["What is the largest prime factor of 13195?"], "29");
});

test("every worked example's result is what the VM computes for its code", () => {
  assert.ok(FEW_SHOT_POOL.length >= 10);
  for (const ex of FEW_SHOT_POOL) {
    const outcome = runC(ex.code);
    assert.ok(outcome.ok, ex.code);
    assert.equal(outcome.text, ex.result, ex.question);
  }
  assert.deepEqual(parseShotCounts("0,2,10,2"), [0, 2, 10]);
  assert.throws(() => parseShotCounts("0,x"), /"x" is not a whole number/);
  assert.throws(() => parseShotCounts("99"), /99 examples asked/);
});

test("ruffian eval --few-shot prints the success table and writes the plot, on every prompt style", () => {
  withTempDir((dir) => {
    // A random-weight model with a ChatML template (as Qwen2.5-Coder has): the chat-template path.
    const cfg: LlamaConfig = {
      nVocab: 1000,
      nEmbd: 32,
      nLayer: 2,
      nHead: 4,
      nHeadKv: 2,
      nFf: 64,
      nCtx: 4096,
      rmsEps: 1e-5,
      ropeBase: 10000,
    };
    const chatModel = join(dir, "chatml.gguf");
    const chatml =
      "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}" +
      "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
    writeLlamaGguf(
      chatModel,
      cfg,
      randomLlamaWeights(cfg, 3),
      {
        "general.name": { type: "string", value: "random-chatml" },
        "tokenizer.chat_template": { type: "string", value: chatml },
      },
      syntheticSpmVocabulary(cfg.nVocab),
    );
    // ruffian-nano (its own Q:/A: format) is trained on 256 positions: even one example does not
    // fit, so it runs 0-shot only and a 2-example sweep is refused (see below).
    const nano = join(packageRoot, "models", "ruffian-nano.gguf");
    const models = [
      join(packageRoot, "models", "stories260K.gguf"), // plain
      nano,
      chatModel, // a chat template
    ];
    for (const [i, model] of models.entries()) {
      const counts = model === nano ? "0" : "0,2";
      const plot = join(dir, `plot${i}.svg`);
      const json = join(dir, `scores${i}.json`);
      const r = ruffian(
        "eval",
        "--few-shot",
        counts,
        "--model",
        model,
        "--questions",
        setPath,
        "--limit",
        "2",
        "-n",
        "24",
        "--parallel",
        "2",
        "--plot",
        plot,
        "--json",
        json,
      );
      assert.equal(r.code, 0, r.stderr);
      // The table, then (random-weight models only) a blank line and the machinery note.
      const [table, note] = r.stdout.split("\n\n");
      const rows = table!.trim().split("\n");
      assert.equal(
        rows[0],
        "| examples | n | region written | compiled and ran | final answer right |",
      );
      assert.equal(rows.length, model === nano ? 3 : 4);
      assert.match(rows[2]!, /^\| 0 \| 2 \| \d+\.\d% \| \d+\.\d% \| \d+\.\d% \|$/);
      if (model === chatModel) assert.match(note!, /^note: random-chatml has random weights/);
      else assert.equal(note, undefined);
      assert.match(r.stderr, new RegExp(`${model === nano ? 0 : 2} examples: 2/2`), "progress");
      // The table is the grader's verdict on each transcript the run kept.
      const scores = JSON.parse(readFileSync(json, "utf8")) as Array<{
        shots: number;
        correct: number;
        answers: Array<{
          text: string;
          correct: boolean;
          question: { task: string; question: string; result: string };
        }>;
      }>;
      for (const s of scores) {
        for (const a of s.answers)
          assert.equal(a.correct, gradeTranscript(a.question, a.text).correct);
      }
      const svg = readFileSync(plot, "utf8");
      assert.match(svg, /^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
      assert.equal((svg.match(/<polyline /g) ?? []).length, 3, "one line per outcome");
    }
    // The prompt must fit the context the model was trained with, its answer budget included.
    const refused = ruffian(
      "eval",
      "--few-shot",
      "0,2",
      "--model",
      nano,
      "--questions",
      setPath,
      "--limit",
      "2",
      "-n",
      "24",
      "--plot",
      join(dir, "refused.svg"),
    );
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(
      refused.stderr,
      /^ruffian: the few-shot prompt does not fit the model's context: 2 examples take \d+ tokens .*; with 24 answer tokens \(-n\) that needs \d+, but the context of ruffian-nano\.gguf is 256 tokens\./,
    );
    assert.doesNotMatch(refused.stderr, /\n\s+at /, "no stack trace");
    assert.equal(refused.stdout, "");
  });
});
