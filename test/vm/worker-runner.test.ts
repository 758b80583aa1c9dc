// The worker runner: C, Lisp and CALC jobs on warm big-stack worker threads, asynchronously (the
// caller's event loop keeps turning) and synchronously (Atomics.wait), with the same outcome
// shape and limits as on the calling thread; a hung or dead worker is replaced.
import { test } from "node:test";
import assert from "node:assert/strict";
import { VmWorkerRunner } from "../../src/vm/index.js";

const deep = (n: number): string =>
  `int f(int n){return n?1+f(n-1):0;}\nint main(){ printf("%d\\n", f(${n})); return 6; }`;

test("run answers C, Lisp and CALC jobs with the same outcomes as the in-process runners", async () => {
  const runner = new VmWorkerRunner({ poolSize: 2 });
  try {
    const [c, lisp, calc] = await Promise.all([
      runner.run({ language: "c", source: deep(100_000) }),
      runner.run({
        language: "lisp",
        source: "(define (fact n) (if (= n 0) 1 (* n (fact (- n 1))))) (fact 25)",
      }),
      runner.run({ language: "calc", source: "123456789*987654321" }),
    ]);
    assert.ok(c.ok, c.ok ? "" : c.error.message);
    assert.equal(c.stdout, "100000\n");
    assert.equal(c.exitCode, 6);
    assert.ok(
      lisp.ok && lisp.text === "15511210043330985984000000",
      lisp.ok ? lisp.text : lisp.error.message,
    );
    assert.ok(calc.ok && calc.value.value === 121932631112635269n, JSON.stringify(calc.ok));
    const limited = await runner.run({
      language: "c",
      source: "for (;;) {}",
      options: { limits: { maxInstructions: 1_000_000 } },
    });
    assert.ok(!limited.ok);
    assert.match(limited.error.message, /^instruction limit exceeded \(1000000 instructions/);
    assert.deepEqual([limited.error.line, limited.error.column], [1, 1]);
  } finally {
    await runner.close();
  }
});

test("a job computing on a worker leaves the caller's event loop free", async () => {
  const runner = new VmWorkerRunner({ poolSize: 1 });
  try {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    // About 3e8 metered iterations: long enough that the 1 ms timer must fire meanwhile.
    const outcome = await runner.run({
      language: "c",
      source: "long s = 0; for (long i = 0; i < 300000000; i++) s += i & 7; s",
      options: { profile: "large" },
    });
    clearInterval(timer);
    assert.ok(outcome.ok, outcome.ok ? "" : outcome.error.message);
    assert.equal(outcome.value.value, 1050000000n);
    assert.ok(ticks > 0, "the timer never fired while the worker computed");
  } finally {
    await runner.close();
  }
});

test("runSync blocks for the answer and reaches depths the calling thread cannot", async () => {
  const runner = new VmWorkerRunner();
  try {
    const r = runner.runSync({ language: "c", source: deep(200_000) });
    assert.ok(r.ok, r.ok ? "" : r.error.message);
    assert.equal(r.stdout, "200000\n");
    const calc = runner.runSync({ language: "calc", source: "(1<<100) + 1" });
    assert.ok(calc.ok && calc.text === "1267650600228229401496703205377");
  } finally {
    await runner.close();
  }
});

test("a worker that stays silent past its timeout is terminated and replaced", async () => {
  const runner = new VmWorkerRunner({ poolSize: 1 });
  const endless = {
    language: "c" as const,
    source: "for (;;) {}",
    options: { profile: "huge" as const },
  };
  try {
    const hung = await runner.run(endless, { timeoutMs: 300 });
    assert.ok(!hung.ok);
    assert.equal(
      hung.error.message,
      "the VM worker did not answer within 300 ms (the wall-clock limit plus a grace period) and was replaced",
    );
    const next = await runner.run({ language: "c", source: "6*7" });
    assert.ok(next.ok && next.text === "42");

    const hungSync = runner.runSync(endless, { timeoutMs: 300 });
    assert.ok(!hungSync.ok && /did not answer within 300 ms/.test(hungSync.error.message));
    const nextSync = runner.runSync({ language: "c", source: "6*7" });
    assert.ok(nextSync.ok && nextSync.text === "42");
  } finally {
    await runner.close();
  }
});

test("a worker that dies (out of JS heap) fails its job clearly and is replaced", async () => {
  // A real death: a Lisp program allowed more memory than the worker's capped JS heap holds.
  const runner = new VmWorkerRunner({ poolSize: 1, maxOldGenerationSizeMb: 32 });
  try {
    const died = await runner.run({
      language: "lisp",
      source:
        "(define (build n acc) (if (= n 0) acc (build (- n 1) (cons (list n n n) acc)))) (length (build 20000000 (quote ())))",
      options: { limits: { maxMemoryBytes: 1e12, maxSteps: 1e12, wallClockMs: 600_000 } },
    });
    assert.ok(!died.ok);
    assert.match(died.error.message, /^the VM worker died \(.+\) and was replaced/);
    const next = await runner.run({ language: "lisp", source: "(+ 1 2)" });
    assert.ok(next.ok && next.text === "3", next.ok ? next.text : next.error.message);
  } finally {
    await runner.close();
  }
});

test("a closed runner refuses jobs with a clear failure", async () => {
  const runner = new VmWorkerRunner();
  await runner.close();
  const r = await runner.run({ language: "calc", source: "1+1" });
  assert.ok(!r.ok && r.error.message === "the VM worker runner is closed");
});
