// The nano data generator: results computed by the VM agree with an independent BigInt reference,
// held-out wordings never occur in training, and the committed evaluation sets are reproducible.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  TASKS,
  Rng,
  fill,
  operandKey,
  COMMUTATIVE_TASKS,
  type TaskInstance,
} from "../../src/nano/tasks.js";
import {
  decoratedVariants,
  heldOutTemplates,
  normalizeWording,
  trainingQuestion,
  trainingTemplates,
} from "../../src/nano/phrasing.js";
import {
  computeResult,
  generateExamples,
  isHeldOutKey,
  regionSource,
} from "../../src/nano/dataset.js";
import { renderNanoPrompt } from "../../src/nano/format.js";
import { formatToolCall, parseToolCall } from "../../src/eval/tool-call.js";
import { packageRoot } from "../../src/paths.js";

const isPrime = (n: bigint): boolean => {
  if (n < 2n) return false;
  for (let d = 2n; d * d <= n; d++) if (n % d === 0n) return false;
  return true;
};
const gcd = (a: bigint, b: bigint): bigint => (b === 0n ? a : gcd(b, a % b));

/** What each task's answer must be, computed without the VM. */
function reference(inst: TaskInstance): string {
  const v = (k: string) => BigInt(inst.values[k]!);
  const primesBelow = () => {
    const out: bigint[] = [];
    for (let i = 2n; i < v("n"); i++) if (isPrime(i)) out.push(i);
    return out;
  };
  switch (inst.task) {
    case "add":
      return String(v("a") + v("b"));
    case "sub":
      return String(v("a") - v("b"));
    case "mul":
      return String(v("a") * v("b"));
    case "div":
      return String(v("a") / v("b"));
    case "mod":
      return String(v("a") % v("b"));
    case "power":
      return String(v("a") ** v("n"));
    case "factorial": {
      let f = 1n;
      for (let i = 2n; i <= v("n"); i++) f *= i;
      return String(f);
    }
    case "fibonacci": {
      let [a, b] = [0n, 1n];
      for (let i = 0n; i < v("n"); i++) [a, b] = [b, a + b];
      return String(a);
    }
    case "gcd":
      return String(gcd(v("a"), v("b")));
    case "lcm":
      return String((v("a") / gcd(v("a"), v("b"))) * v("b"));
    case "prime":
      return isPrime(v("n")) ? "1" : "0";
    case "count_primes":
      return String(primesBelow().length);
    case "sum_primes":
      return String(primesBelow().reduce((s, p) => s + p, 0n));
    case "sum_range":
      return String(((v("a") + v("b")) * (v("b") - v("a") + 1n)) / 2n);
    case "sum_multiples": {
      let s = 0n;
      for (let i = 1n; i < v("n"); i++) if (i % v("a") === 0n || i % v("b") === 0n) s += i;
      return String(s);
    }
    case "digit_sum":
      return String([...String(inst.values.n)].reduce((s, d) => s + Number(d), 0));
  }
  throw new Error(`no reference for task ${inst.task}`);
}

test("every task's VM result equals an independent BigInt reference", () => {
  const rng = new Rng(7);
  for (const task of TASKS) {
    for (let i = 0; i < 12; i++) {
      const inst = task.draw(rng);
      const result = computeResult(inst);
      assert.equal(result, reference(inst), `${task.name} ${inst.key}: ${inst.code}`);
      const sentence = inst.answer(result);
      if (task.name === "prime") assert.match(sentence, result === "1" ? /^Yes/ : /^No/);
      else assert.ok(sentence.includes(result), `${sentence} carries ${result}`);
    }
  }
});

test("held-out wordings never occur in training, even up to case, punctuation and decoration", () => {
  const rng = new Rng(3);
  for (const task of TASKS) {
    const wording = task.draw(rng).wording;
    const seen = new Set(
      trainingTemplates(wording)
        .flatMap(decoratedVariants)
        .map((t) => normalizeWording(t)),
    );
    const heldOut = heldOutTemplates(wording);
    assert.ok(heldOut.length >= 2, `${task.name} has held-out wordings`);
    for (const h of heldOut) {
      assert.ok(!seen.has(normalizeWording(h)), `${task.name}: "${h}" is also a training wording`);
    }
  }
});

test("no sampled training question (random filler words included) is a held-out wording", () => {
  const rng = new Rng(11);
  for (const task of TASKS) {
    const wording = task.draw(rng).wording;
    const heldOut = new Set(heldOutTemplates(wording).map((t) => normalizeWording(t)));
    for (let i = 0; i < 4000; i++) {
      const q = trainingQuestion(wording, rng);
      assert.ok(!heldOut.has(normalizeWording(q)), `${task.name}: "${q}" is a held-out wording`);
    }
  }
});

test("every template fills all of its placeholders", () => {
  const rng = new Rng(5);
  for (const task of TASKS) {
    const inst = task.draw(rng);
    for (const t of [...trainingTemplates(inst.wording), ...heldOutTemplates(inst.wording)]) {
      const q = fill(t, inst.values);
      assert.doesNotMatch(q, /undefined|\{|\}/, `${task.name}: ${t}`);
    }
  }
});

test("training and evaluation draw disjoint numbers, and the committed question sets are reproducible", () => {
  const trainKeys = new Set<string>();
  for (const [ex] of generateExamples(800, 1, "train", ["vm"])) {
    trainKeys.add(`${ex!.task}:${ex!.code}`);
  }
  const committed = (name: string) =>
    readFileSync(join(packageRoot, "eval", name), "utf8")
      .trim()
      .split("\n")
      .map(
        (l) => JSON.parse(l) as { task: string; question: string; result: string; code: string },
      );
  const sets: Array<[string, number, "held-out" | "seen"]> = [
    ["nano-questions.jsonl", 2, "held-out"],
    ["nano-questions-seen-wording.jsonl", 3, "seen"],
  ];
  for (const [name, seed, phrasings] of sets) {
    const file = committed(name);
    assert.ok(file.length >= 500, `${name} has at least 500 questions`);
    // The first 240 questions (15 per task) are regenerated; the rest follow from the same stream.
    let i = 0;
    for (const [ex] of generateExamples(240, seed, "eval", ["vm"], phrasings)) {
      const q = file[i++]!;
      assert.deepEqual(q, {
        task: ex!.task,
        question: ex!.question,
        result: ex!.result,
        code: ex!.code,
      });
      assert.ok(!trainKeys.has(`${q.task}:${q.code}`), `${q.code} is also in training`);
    }
  }
});

test("commutative questions are keyed order-independently: a held-out pair is held out both ways", () => {
  assert.equal(operandKey("add", [4821, 377]), operandKey("add", [377, 4821]));
  assert.equal(
    operandKey("sum_multiples", [5, 3, 1000]),
    operandKey("sum_multiples", [3, 5, 1000]),
  );
  assert.notEqual(operandKey("sub", [4821, 377]), operandKey("sub", [377, 4821]));
  assert.notEqual(operandKey("div", [12, 4]), operandKey("div", [4, 12]));
  let checked = 0;
  for (const task of TASKS.filter((t) => COMMUTATIVE_TASKS.has(t.name))) {
    const rng = new Rng(11);
    for (let i = 0; i < 2000; i++) {
      const inst = task.draw(rng);
      const { a, b, n } = inst.values as Record<string, number>;
      const swapped = operandKey(task.name, n === undefined ? [b!, a!] : [b!, a!, n]);
      assert.equal(swapped, inst.key, `${task.name} ${inst.key}`);
      if (a !== b) checked++;
    }
  }
  assert.ok(checked > 1000, `${checked} pairs checked`);
  // The split itself: swapping a held-out pair's operands keeps it out of training.
  for (const [ex] of generateExamples(160, 2, "eval", ["vm"])) {
    const nums = ex!.question.match(/\d+/g)!.map(Number);
    if (COMMUTATIVE_TASKS.has(ex!.task) && ex!.task !== "sum_multiples") {
      assert.ok(isHeldOutKey(operandKey(ex!.task, [nums[1]!, nums[0]!])), ex!.question);
    }
  }
});

test("the tools variant is the same dialogue with the region sent as a tool call and the result as a tool message", () => {
  for (const [vm, tools] of generateExamples(32, 5, "train", ["vm", "tools"])) {
    assert.equal(tools!.question, vm!.question);
    assert.equal(tools!.result, vm!.result);
    // What the model sees is exactly what the protocol runtime renders after running the call.
    const call = formatToolCall(regionSource(vm!.code));
    assert.equal(
      tools!.prompt + tools!.completion,
      renderNanoPrompt([
        { role: "user", text: vm!.question },
        { role: "assistant", text: call },
        { role: "tool", text: vm!.result },
      ]) + ` ${vm!.finalSentence}\n`,
    );
    assert.deepEqual(parseToolCall(call), { code: regionSource(vm!.code) });
    assert.ok(tools!.completion.includes(`${call}${tools!.injected} `));
  }
});
