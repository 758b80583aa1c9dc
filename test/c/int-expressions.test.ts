// Differential test of C integer semantics: thousands of random UB-free expressions mixing int,
// unsigned, long long and unsigned long long, checked against an exact BigInt evaluation (and gcc).
import { test } from "node:test";
import assert from "node:assert/strict";
import { runC } from "../../src/vm/index.js";
import { describeError } from "../../src/vm/result.js";
import { makeExpressionProgram } from "./int-expressions.js";
import { gccAvailable, runWithGcc } from "./gcc-oracle.js";

const PROGRAMS = 60;
const EXPRESSIONS_PER_PROGRAM = 40;

for (let i = 1; i <= PROGRAMS; i++) {
  const seed = i * 7919;
  test(`integer expressions, seed ${seed}`, () => {
    const program = makeExpressionProgram(seed, EXPRESSIONS_PER_PROGRAM);
    const outcome = runC(program.source, { profile: "small" });
    assert.ok(outcome.ok, outcome.ok ? "" : describeError(outcome.error));
    const got = outcome.stdout.split("\n");
    const want = program.expected.split("\n");
    const lines = program.source.split("\n").filter((l) => l.includes("printf"));
    for (let k = 0; k < want.length; k++)
      assert.equal(got[k], want[k], `expression ${k}: ${lines[k]?.trim()}`);
    if (gccAvailable())
      assert.equal(runWithGcc(program.source).stdout, program.expected, "evaluator vs gcc");
  });
}
