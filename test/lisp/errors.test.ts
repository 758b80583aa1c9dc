// Run-time error paths: each gives its kind, exact message and the line:column of the form.
import { test } from "node:test";
import assert from "node:assert/strict";
import { LispSession } from "../../src/lisp/index.js";
import { assertError, failure } from "./helpers.js";

const runtime = (message: string, line: number, column: number) => ({
  kind: "runtime" as const,
  message,
  line,
  column,
});
const type = (message: string, line: number, column: number) => ({
  kind: "type" as const,
  message,
  line,
  column,
});

test("unbound variables point at the symbol", () => {
  assertError("(+ 1 foo)", runtime("unbound variable 'foo'", 1, 6));
  assertError("(define (f) (g))\n(f)", runtime("unbound variable 'g'", 1, 14));
});

test("car/cdr of a non-pair is a type error at the call", () => {
  assertError("(car '())", type("car: expected a pair, got ()", 1, 1));
  assertError("(let ((x 5))\n  (cdr x))", type("cdr: expected a pair, got 5", 2, 3));
  assertError("(cadr '(1))", type("cadr: expected a pair, got (1)", 1, 1));
});

test("wrong argument types name the procedure and the value", () => {
  assertError('(+ 1 "2")', type('+: expected a number, got "2"', 1, 1));
  assertError("(length 5)", type("length: expected a list, got 5", 1, 1));
  assertError("(length (cons 1 2))", type("length: expected a list, got (1 . 2)", 1, 1));
  assertError("(map 5 '(1))", type("map: expected a procedure, got 5", 1, 1));
  assertError('(string-append "a" \'b)', type("string-append: expected a string, got b", 1, 1));
  assertError("(odd? 1.5)", type("odd?: expected an exact integer, got 1.5", 1, 1));
  assertError(
    "(list-ref '(1) -1)",
    type("list-ref: expected a non-negative exact integer, got -1", 1, 1),
  );
});

test("wrong number of arguments, for lambdas and builtins", () => {
  assertError(
    "(define (fib n) n) (fib 1 2)",
    type("wrong number of arguments to 'fib': expected 1, got 2", 1, 20),
  );
  assertError("(car)", type("wrong number of arguments to 'car': expected 1, got 0", 1, 1));
  assertError("(-)", type("wrong number of arguments to '-': expected at least 1, got 0", 1, 1));
  assertError(
    '(substring "a")',
    type("wrong number of arguments to 'substring': expected 2 to 3, got 1", 1, 1),
  );
  assertError(
    "((lambda (a b . c) a) 1)",
    type("wrong number of arguments to 'lambda': expected at least 2, got 1", 1, 1),
  );
  // Inside a higher-order call the error points at the call that invoked the procedure.
  assertError(
    "(map (lambda (x y) x) '(1 2))",
    type("wrong number of arguments to 'lambda': expected 2, got 1", 1, 1),
  );
});

test("calling a non-procedure", () => {
  assertError("(5 3)", type("not a procedure: 5", 1, 1));
  assertError("(define x '(1 2))\n(x 0)", type("not a procedure: (1 2)", 2, 1));
});

test("division by zero, for every division", () => {
  assertError("(/ 1 0)", runtime("division by zero", 1, 1));
  assertError("(+ 1 (quotient 5 0))", runtime("division by zero", 1, 6));
  assertError("(remainder 5 0)", runtime("division by zero", 1, 1));
  assertError("(modulo 5 0)", runtime("division by zero", 1, 1));
  assertError("(mod 5 0)", runtime("division by zero", 1, 1));
  assertError("(/ 2.5 0)", runtime("division by zero", 1, 1));
});

test("index and conversion errors", () => {
  assertError(
    "(list-ref '(a b) 2)",
    runtime("list-ref: index 2 is out of range for a list of length 2", 1, 1),
  );
  assertError("(list-tail '(a) 3)", runtime("list-tail: index 3 is out of range for (a)", 1, 1));
  assertError(
    '(substring "abc" 2 9)',
    runtime("substring: range 2..9 is out of bounds for length 3", 1, 1),
  );
  assertError("(exact 1.5)", runtime("exact: 1.5 has no exact integer representation", 1, 1));
});

test("error raises a runtime error with its message and irritants", () => {
  assertError('(error "bad input:" 42 "x")', runtime('bad input: 42 "x"', 1, 1));
  assertError(
    '(define (check n) (if (< n 0) (error "negative" n) n))\n(check -3)',
    runtime("negative -3", 1, 31),
  );
});

test("output printed before a failure is kept in the outcome", () => {
  const outcome = new LispSession().run('(display "before") (car 1)');
  assert.equal(outcome.ok, false);
  assert.equal(outcome.stdout, "before");
  assert.equal(failure('(display "x") (car 1)').message, "car: expected a pair, got 1");
});
