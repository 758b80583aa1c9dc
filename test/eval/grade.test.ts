// The strict grader on hand-made transcripts: the final line must state the result as the answer,
// a primality answer must name its number, and a result the runtime injected never counts.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  answerPart,
  finalLine,
  isCorrect,
  carriesResult,
  numbersIn,
} from "../../src/eval/grade.js";

test("a result contained in the final line is not enough: it must be the answer", () => {
  const gcd = { task: "gcd", question: "What is the gcd of 12 and 4?", result: "4" };
  const wrong = " [C: long a=12,b=4; while(b){long t=a%b;a=b;b=t;} return a;] = VM[4]\n";
  assert.ok(!isCorrect(gcd, wrong + "The gcd of 12 and 4 is 12."), "4 only as an operand");
  assert.ok(carriesResult(gcd, wrong + "The gcd of 12 and 4 is 12."), "the lenient column sees 4");
  assert.ok(isCorrect(gcd, wrong + "The gcd of 12 and 4 is 4."));
  assert.ok(isCorrect(gcd, wrong + "The answer is 4."));
  assert.ok(!isCorrect(gcd, wrong + "The gcd of 4 and 12 is 12."), "operands swapped");
  const mod = { task: "mod", question: "What is 1 % 93?", result: "1" };
  assert.ok(!isCorrect(mod, "x\n1 divided by 93 is 0."));
  assert.ok(isCorrect(mod, "x\nSo 1 % 93 = 1."));
  const count = { task: "count_primes", question: "How many primes below 5000?", result: "669" };
  assert.ok(isCorrect(count, "x\nThere are 669 primes below 5000."));
  assert.ok(!isCorrect(count, "x\nThere are 669 primes below 4000."));
  const sub = { task: "sub", question: "What is 1 - 6?", result: "-5" };
  assert.deepEqual(numbersIn("So 1 - 6 = -5, not 4821-377."), ["1", "6", "-5", "4821", "377"]);
  assert.ok(isCorrect(sub, "x\nSo 1 - 6 = -5."));
  assert.ok(!isCorrect(sub, "x\nSo 1 - 6 = 5."), "the sign counts");
  const same = { task: "add", question: "What is 3 plus 3?", result: "6" };
  assert.ok(isCorrect(same, "x\nSo 3 + 3 = 6."), "a question number used as often as asked");
});

test("a primality answer gives the verdict and names the number", () => {
  const q = { task: "prime", question: "Is 7919 prime?", result: "1" };
  assert.ok(isCorrect(q, "x = VM[1]\nYes, 7919 is prime."));
  assert.ok(isCorrect(q, "x = VM[1]\nThe VM returned 1, so 7919 is prime."));
  assert.ok(!isCorrect(q, "x = VM[1]\nYes, it is prime."), "the number is not named");
  assert.ok(!isCorrect(q, "x = VM[1]\nYes."));
  assert.ok(!isCorrect(q, "x = VM[1]\nYes, 7917 is prime."), "another number");
  assert.ok(!isCorrect(q, "x = VM[1]\nNo, 7919 is not prime."));
  const no = { task: "prime", question: "Is 91 a prime number?", result: "0" };
  assert.ok(isCorrect(no, "x\nNo, 91 is not prime."));
  assert.ok(isCorrect(no, "x\n91 = 7 * 13 is composite.") === false, "7 and 13 are not asked");
  assert.ok(!isCorrect(no, "x\nYes, 91 is prime."));
});

test("the answer is what follows the last injected result, never the result itself", () => {
  const q = { task: "mul", question: "What is 4821 times 377?", result: "1817517" };
  assert.equal(answerPart(" [C: 4821*377] = VM[1817517]\nSo it is."), "\nSo it is.");
  assert.equal(
    finalLine(" [C: 4821*377] = VM[1817517]\nSo 4821 * 377 = 1817517.\n"),
    "So 4821 * 377 = 1817517.",
  );
  assert.ok(!isCorrect(q, " [C: 4821*377] = VM[1817517]"), "the region line alone");
  assert.ok(!isCorrect(q, " [C: 4821*377] = VM[1817517]\nThe answer is 18175170."));
  assert.ok(isCorrect(q, "4821 × 377: [C: 4821*377] = VM[1817517]. The product is 1817517."));
  assert.ok(isCorrect(q, "The product is 1817517."), "an answer without a region is graded too");
});
