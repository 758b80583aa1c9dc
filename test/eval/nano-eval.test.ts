// The evaluation harness: grading rules, the comparison table, and `ruffian eval` end to end on the
// shipped ruffian-nano through the real in-band runtime (llama.cpp + C VM injection).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { finalLine, isCorrect, type EvalReport } from "../../src/eval/nano-eval.js";
import { comparisonTable } from "../../src/eval/table.js";
import { packageRoot } from "../../src/paths.js";

const bin = join(packageRoot, "bin", "ruffian.js");

function ruffian(...args: string[]) {
  const r = spawnSync(process.execPath, [bin, ...args], { encoding: "utf8", cwd: "/" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test("answers are graded by their last line: the whole number, or Yes/No for primality", () => {
  const q = { task: "mul", question: "?", result: "1817517" };
  assert.equal(
    finalLine(" [C: 4821*377] = VM[1817517]\nSo 4821 * 377 = 1817517.\n"),
    "So 4821 * 377 = 1817517.",
  );
  assert.ok(isCorrect(q, " [C: 4821*377] = VM[1817517]\nThe answer is 1817517."));
  assert.ok(
    !isCorrect(q, " [C: 4821*377] = VM[1817517]\nThe answer is 18175170."),
    "a longer number",
  );
  assert.ok(
    !isCorrect(q, " [C: 4821*377] = VM[1817517]"),
    "the region line alone is not an answer",
  );
  const neg = { task: "sub", question: "What is 1 - 6?", result: "-5" };
  assert.ok(isCorrect(neg, "x\nSo 1 - 6 = -5."));
  assert.ok(!isCorrect(neg, "x\nSo 1 - 6 = 5."), "the sign counts");
  // Every other number in the final line must come from the question.
  const count = { task: "count_primes", question: "How many primes below 5000?", result: "669" };
  assert.ok(isCorrect(count, "x\nThere are 669 primes below 5000."));
  assert.ok(!isCorrect(count, "x\nThere are 669 primes below 4000."), "a wrong restated number");
  const mod = { task: "mod", question: "What is 1 % 93?", result: "1" };
  assert.ok(!isCorrect(mod, "x\n1 divided by 93 is 0."), "the result only as an operand");
  assert.ok(isCorrect(mod, "x\nSo 1 % 93 = 1."));
  const prime = { task: "prime", question: "Is 91 prime?", result: "0" };
  assert.ok(isCorrect(prime, "x\nNo, 91 is not prime."));
  assert.ok(!isCorrect(prime, "x\nYes, 91 is prime."));
});

test("the comparison table has a row per task, one column per run and the region-exact column", () => {
  const report = (correct: number[], exact: number[]): EvalReport => ({
    answers: [],
    byTask: ["add", "prime"].map((task, i) => ({
      task,
      total: 4,
      correct: correct[i]!,
      resultInAnswer: 4,
      codeExact: exact[i]!,
    })),
    total: 8,
    correct: correct[0]! + correct[1]!,
    accuracy: (correct[0]! + correct[1]!) / 8,
    seconds: 1,
  });
  const table = comparisonTable([
    { label: "(a)", report: report([4, 3], [4, 2]) },
    { label: "(b)", report: report([1, 0], [4, 2]) },
  ]);
  const lines = table.trim().split("\n");
  assert.equal(lines[0], "| task | n | (a) | (b) | result in answer (a) | region exact (a) |");
  assert.equal(lines[2], "| add | 4 | 100.0% | 25.0% | 100.0% | 100.0% |");
  assert.equal(lines[3], "| prime | 4 | 75.0% | 0.0% | 100.0% | 50.0% |");
  assert.equal(lines[4], "| **all** | 8 | **87.5%** | **12.5%** | 100.0% | 75.0% |");
});

test("ruffian eval runs the shipped model in-band; injection is what makes it right", () => {
  const dir = mkdtempSync(join(tmpdir(), "ruffian-eval-"));
  try {
    // The set cycles through the 16 tasks, so 32 questions cover each task twice.
    const withVm = ruffian("eval", "--limit", "32", "--json", join(dir, "a.json"));
    assert.equal(withVm.code, 0, withVm.stderr);
    const a = JSON.parse(readFileSync(join(dir, "a.json"), "utf8")) as EvalReport;
    assert.equal(a.total, 32);
    assert.equal(a.byTask.length, 16);
    for (const ans of a.answers) {
      assert.equal(ans.correct, isCorrect(ans.question, ans.text));
      // Every result in the text came from the VM: the region is followed by its injection.
      if (ans.wroteRegion) assert.match(ans.text, /\] = VM\[/);
    }
    assert.match(withVm.stdout, /^all\s+32\s/m);

    const noInject = ruffian("eval", "--limit", "32", "--no-inject", "--json", join(dir, "b.json"));
    assert.equal(noInject.code, 0, noInject.stderr);
    const b = JSON.parse(readFileSync(join(dir, "b.json"), "utf8")) as EvalReport;
    assert.ok(a.correct > b.correct + 8, `with the VM ${a.correct}/32, without ${b.correct}/32`);

    const table = ruffian("eval", "--limit", "32", "--table");
    assert.equal(table.code, 0, table.stderr);
    const rows = table.stdout.trim().split("\n");
    assert.equal(rows.length, 2 + 16 + 1);
    const all = rows[rows.length - 1]!.split("|").map((c) => c.trim());
    assert.equal(all[3], `**${((100 * a.correct) / 32).toFixed(1)}%**`, "(a) equals the plain run");
    assert.equal(all[4], `**${((100 * b.correct) / 32).toFixed(1)}%**`, "(b) equals --no-inject");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("ruffian eval names a bad question set and a missing baseline, and exits non-zero", () => {
  const missing = ruffian("eval", "--set", "/no/such/set.jsonl");
  assert.notEqual(missing.code, 0);
  assert.match(missing.stderr, /\/no\/such\/set\.jsonl/);
  const baseline = ruffian("eval", "--limit", "1", "--table", "--baseline", "/no/base.gguf");
  assert.notEqual(baseline.code, 0);
  assert.match(baseline.stderr, /baseline model not found: \/no\/base\.gguf/);
});
