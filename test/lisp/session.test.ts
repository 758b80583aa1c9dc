// The Lisp session as the decode loop uses it: the seed's examples, definitions persisting across
// regions, exact big integers, proper tail calls and the VmOutcome shape.
import { test } from "node:test";
import assert from "node:assert/strict";
import { LispSession, runLisp } from "../../src/lisp/index.js";
import { injectionText } from "../../src/vm/result.js";
import { success, text } from "./helpers.js";

test("the seed's nested arithmetic gives 14", () => {
  const outcome = runLisp("(+ 2 (* 3 4))");
  assert.equal(injectionText(outcome), "14");
  assert.ok(outcome.ok);
  assert.deepEqual(outcome.value, { ctype: "integer", value: 14n });
});

test("the seed's other examples: mod, comparisons, nesting", () => {
  assert.equal(text("(+ 3 4)"), "7");
  assert.equal(text("(* 6 7)"), "42");
  assert.equal(text("(mod 17 5)"), "2");
  assert.equal(text("(< 3 5)"), "#t");
  assert.equal(text("(> 7 2)"), "#t");
  assert.equal(text("(= 5 5)"), "#t");
  assert.equal(text("(* (+ 2 3) (- 10 4))"), "30");
});

test("a function defined in one region is callable from the next region of the same session", () => {
  const session = new LispSession();
  const define = session.run(`(define (tri n)
        (if (< n 1) 0
          (+ n (tri (- n 1)))))`);
  assert.ok(define.ok);
  assert.equal(define.text, "tri");
  assert.deepEqual(define.value, { ctype: "symbol", value: "tri" });
  const call = session.run("(tri 10)");
  assert.equal(injectionText(call), "55");
  // A fresh session does not see it.
  const other = new LispSession().run("(tri 10)");
  assert.equal(injectionText(other), "error: unbound variable 'tri' at 1:2");
});

test("every session starts with fact and fib, as the docs use them, and may redefine them", () => {
  const session = new LispSession();
  assert.equal(injectionText(session.run("(fib 10)")), "55");
  assert.equal(injectionText(session.run("(fact 20)")), "2432902008176640000");
  assert.equal(injectionText(session.run("(fib 0)")), "0");
  session.run("(define (fib n) (* n 100))");
  assert.equal(injectionText(session.run("(fib 3)")), "300");
  assert.equal(injectionText(new LispSession().run("(fib 3)")), "2");
});

test("(fact 30) is the exact 33-digit integer", () => {
  const session = new LispSession();
  session.run("(define (fact n) (if (= n 0) 1 (* n (fact (- n 1)))))");
  const outcome = success("(fact 30)", session);
  assert.equal(outcome.text, "265252859812191058636308480000000");
  assert.equal(outcome.text.length, 33);
  assert.deepEqual(outcome.value, { ctype: "integer", value: 265252859812191058636308480000000n });
});

test("a tail-recursive loop of a million iterations completes in constant stack", () => {
  // A 50-frame stack is plenty: tail calls leave no frame behind.
  const session = new LispSession({ limits: { maxDepth: 50 } });
  session.run("(define (count-up i acc) (if (= i 1000000) acc (count-up (+ i 1) (+ acc i))))");
  const outcome = success("(count-up 0 0)", session);
  assert.equal(outcome.text, "499999500000");
  assert.ok(outcome.stats.instructions > 1_000_000);
});

test("named let, do and mutual recursion also loop in constant stack", () => {
  assert.equal(text("(let loop ((i 0)) (if (< i 300000) (loop (+ i 1)) i))"), "300000");
  assert.equal(text("(do ((i 0 (+ i 1))) ((= i 300000) i))"), "300000");
  const session = new LispSession();
  session.run(`(define (my-even? n) (if (= n 0) #t (my-odd? (- n 1))))
               (define (my-odd? n) (if (= n 0) #f (my-even? (- n 1))))`);
  assert.equal(text("(my-even? 300001)", session), "#f");
  // Tail calls through cond, and, or, when and apply.
  session.run(
    `(define (down n) (cond ((= n 0) 'done) (else (and #t (or #f (when #t (apply down (list (- n 1)))))))))`,
  );
  assert.equal(text("(down 200000)", session), "done");
});

test("display output is the result text; otherwise the last value is printed", () => {
  const printed = success('(display "sum: ") (display (+ 1 2)) (newline) 99');
  assert.equal(printed.text, "sum: 3\n");
  assert.equal(printed.stdout, "sum: 3\n");
  assert.deepEqual(printed.value, { ctype: "integer", value: 99n });
  assert.equal(text('\'(1 "two" 3.5 #t sym)'), '(1 "two" 3.5 #t sym)');
  assert.equal(text('"raw string"'), "raw string");
  assert.equal(text('(write "q\\"uote")'), '"q\\"uote"');
});

test("value.ctype names the Lisp type", () => {
  const cases: Array<[string, string, unknown]> = [
    ["42", "integer", 42n],
    ["1.5", "float", 1.5],
    ["#f", "boolean", false],
    ['"s"', "string", "s"],
    ["'abc", "symbol", "abc"],
    ["'(1 2)", "list", "(1 2)"],
    ["'()", "list", "()"],
    ["(cons 1 2)", "pair", "(1 . 2)"],
    ["car", "procedure", "#<procedure car>"],
    ["(lambda (x) x)", "procedure", "#<procedure>"],
    ["(if #f #f)", "void", null],
  ];
  for (const [source, ctype, value] of cases) {
    assert.deepEqual(success(source).value, { ctype, value }, source);
  }
  assert.equal(text("(if #f #f)"), "");
});

test("definitions made before a failure stay in the session", () => {
  const session = new LispSession();
  const outcome = session.run("(define kept 1) (car '())");
  assert.equal(outcome.ok, false);
  assert.equal(text("kept", session), "1");
  // A syntax error anywhere in a region runs nothing of it.
  assert.equal(session.run("(define never 1) (car").ok, false);
  assert.equal(session.run("never").ok, false);
});

test("stats report read time, run time, steps and a memory estimate", () => {
  const outcome = success("(define xs (iota 1000)) (length xs)");
  assert.equal(outcome.text, "1000");
  assert.ok(outcome.stats.compileMs > 0 && outcome.stats.runMs > 0);
  assert.ok(outcome.stats.instructions >= 1000, "iota and length charge per element");
  // 1000 live pairs at the estimate's 32 bytes each.
  assert.ok(outcome.stats.memoryBytes >= 32_000, `memoryBytes ${outcome.stats.memoryBytes}`);
  assert.equal(outcome.outputTruncated, false);
});

test("run time measures the evaluation: more work takes longer, within the call's own time", () => {
  const session = new LispSession();
  const timed = (source: string) => {
    const t0 = performance.now();
    const outcome = session.run(source);
    const wall = performance.now() - t0;
    assert.ok(outcome.ok, source);
    assert.ok(outcome.stats.compileMs + outcome.stats.runMs <= wall, source);
    return outcome.stats;
  };
  const light = timed("(+ 1 2)");
  const heavy = timed("(let loop ((i 0) (s 0)) (if (= i 300000) s (loop (+ i 1) (+ s i))))");
  assert.ok(heavy.runMs > light.runMs, `${heavy.runMs} ms vs ${light.runMs} ms`);
  assert.ok(heavy.instructions > 100 * light.instructions);
});

test("an empty region succeeds with empty text", () => {
  const outcome = success("  ; only a comment\n");
  assert.equal(outcome.text, "");
  assert.deepEqual(outcome.value, { ctype: "void", value: null });
});
