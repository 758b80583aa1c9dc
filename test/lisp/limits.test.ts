// Sandbox bounds: each ends the run with a clean limit error (never a hang, a JS RangeError or a
// crash), and the session stays usable afterwards.
import { test } from "node:test";
import assert from "node:assert/strict";
import { DEFAULT_LISP_LIMITS, LispSession } from "../../src/lisp/index.js";
import { assertError, success, text } from "./helpers.js";

const limit = (message: string) => ({ kind: "limit" as const, message, line: 0, column: 0 });

test("non-tail recursion without a base case is 'recursion too deep'", () => {
  const session = new LispSession();
  session.run("(define (f n) (+ 1 (f (+ n 1))))");
  assertError("(f 0)", limit("recursion too deep"), session);
  // The session survives and still works.
  assert.equal(text("(+ 1 2)", session), "3");
});

test("deep but bounded non-tail recursion works up to the depth limit", () => {
  const session = new LispSession({ limits: { maxDepth: 50_000 } });
  session.run("(define (build n) (if (= n 0) '() (cons n (build (- n 1)))))");
  assert.equal(text("(length (build 20000))", session), "20000");
  assertError("(length (build 60000))", limit("recursion too deep"), session);
});

test("an infinite loop in tail position hits the step limit", () => {
  assertError("(define (spin) (spin)) (spin)", limit("step limit exceeded"), {
    limits: { maxSteps: 100_000 },
  });
  assertError("(do () (#f))", limit("step limit exceeded"), { limits: { maxSteps: 50_000 } });
});

test("work inside builtins is charged to the step budget", () => {
  assertError("(length (iota 200000))", limit("step limit exceeded"), {
    limits: { maxSteps: 100_000 },
  });
});

test("the wall clock bounds a run even when steps remain", () => {
  assertError("(define (spin) (spin)) (spin)", limit("time limit exceeded (30 ms)"), {
    limits: { maxSteps: Number.MAX_SAFE_INTEGER, wallClockMs: 30 },
  });
});

test("building an unbounded structure hits the memory limit", () => {
  const session = new LispSession({ limits: { maxMemoryBytes: 1_000_000 } });
  session.run("(define (grow xs) (grow (cons 1 xs)))");
  assertError("(grow '())", limit("memory limit exceeded"), session);
  assertError(
    '(define (s x) (s (string-append x x))) (s "ab")',
    limit("memory limit exceeded"),
    session,
  );
  assert.equal(text("(length (iota 1000))", session), "1000");
});

test("garbage does not count: a long loop allocating short-lived lists stays within memory", () => {
  const session = new LispSession({ limits: { maxMemoryBytes: 1_000_000 } });
  session.run("(define (churn n) (if (= n 0) 'done (begin (list 1 2 3 4 5) (churn (- n 1)))))");
  assert.equal(text("(churn 100000)", session), "done");
});

test("globals count toward the session's memory", () => {
  const session = new LispSession({ limits: { maxMemoryBytes: 500_000 } });
  assert.equal(text("(define a (iota 10000)) 'ok", session), "ok");
  assertError("(define b (iota 10000))", limit("memory limit exceeded"), session);
});

test("integers beyond the size bound are refused before they are computed", () => {
  const bits = DEFAULT_LISP_LIMITS.maxIntegerBits;
  const message = `memory limit exceeded (integer larger than ${bits} bits)`;
  assertError("(expt 2 10000000)", limit(message));
  assertError("(expt 3 1000000000000)", limit(message));
  assertError(
    "(define (double x) (double (* x x))) (double 3)",
    limit("memory limit exceeded (integer larger than 1000 bits)"),
    { limits: { maxIntegerBits: 1000 } },
  );
  assert.equal(text("(string-length (number->string (expt 2 1000)))"), "302");
});

test("output beyond the cap is cut and flagged, not an error", () => {
  const outcome = success('(do ((i 0 (+ i 1))) ((= i 100)) (display "0123456789"))', {
    limits: { maxOutputBytes: 256 },
  });
  assert.equal(outcome.outputTruncated, true);
  assert.equal(outcome.stdout.length, 256);
  assert.equal(outcome.text, outcome.stdout);
});

test("printing a cyclic list terminates", () => {
  const outcome = success("(define c (list 1 2)) (set-cdr! (cdr c) c) c", {
    limits: { maxOutputBytes: 100 },
  });
  assert.ok(outcome.text.startsWith("(1 2 1 2"));
  assert.ok(outcome.text.endsWith("..."));
});

test("comparing cyclic structures with equal? ends at the step limit", () => {
  const cyclic =
    "(define c (list 1 2)) (set-cdr! (cdr c) c) (define d (list 1 2)) (set-cdr! (cdr d) d)";
  assertError(`${cyclic} (equal? c d)`, limit("step limit exceeded"), {
    limits: { maxSteps: 200_000 },
  });
});

test("limits are configurable per session and reported back", () => {
  const session = new LispSession({ limits: { maxSteps: 123 } });
  assert.equal(session.limits.maxSteps, 123);
  assert.equal(session.limits.maxDepth, DEFAULT_LISP_LIMITS.maxDepth);
  assert.throws(
    () => new LispSession({ limits: { maxDepth: 0 } }),
    /Lisp limit 'maxDepth' must be a positive number, got 0/,
  );
});
