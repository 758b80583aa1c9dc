// Every special form: its normal use and its malformed use (a positioned syntax error).
import { test } from "node:test";
import assert from "node:assert/strict";
import { LispSession } from "../../src/lisp/index.js";
import { assertError, text } from "./helpers.js";

const syntax = (message: string, line: number, column: number) => ({
  kind: "syntax" as const,
  message,
  line,
  column,
});

test("quote and the ' shorthand", () => {
  assert.equal(text("(quote (a b . c))"), "(a b . c)");
  assert.equal(text('\'(1 (2 3) "s")'), '(1 (2 3) "s")');
  assert.equal(text("''a"), "(quote a)");
  assertError("(quote a b)", syntax("bad quote syntax, expected (quote datum)", 1, 1));
});

test("quasiquote with unquote and unquote-splicing", () => {
  assert.equal(text("(define x 5) `(a ,x ,@(list 1 2) b)"), "(a 5 1 2 b)");
  assert.equal(text("`(1 . ,(+ 1 1))"), "(1 . 2)");
  assertError("(list ,x)", syntax("'unquote' outside of a quasiquote", 1, 7));
});

test("if with and without else; only #f is false", () => {
  assert.equal(text("(if (> 3 2) 'yes 'no)"), "yes");
  assert.equal(text("(if 0 'true 'false)"), "true");
  assert.equal(text("(if '() 'true 'false)"), "true");
  assert.equal(text("(if #f 'x)"), "");
  assertError("(if)", syntax("bad if syntax, expected (if test then [else])", 1, 1));
  assertError("(+ 1 (if 1 2 3 4))", syntax("bad if syntax, expected (if test then [else])", 1, 6));
});

test("define of values and functions, with rest parameters", () => {
  const session = new LispSession();
  assert.equal(text("(define answer 42)", session), "answer");
  assert.equal(text("(define (add a b) (+ a b))", session), "add");
  assert.equal(text("(add answer 8)", session), "50");
  assert.equal(text("(define (count . xs) (length xs)) (count 1 2 3)", session), "3");
  assert.equal(text("(define (head x . rest) rest) (head 1 2 3)", session), "(2 3)");
  assert.equal(text("add", session), "#<procedure add>");
  assertError(
    "(define)",
    syntax(
      "bad define syntax, expected (define name value) or (define (name params...) body...)",
      1,
      1,
    ),
  );
  assertError("(define if 1)", syntax("cannot define 'if': it is a special form", 1, 9));
  assertError(
    "(lambda () (if #t (define z 1)))",
    syntax("define is only allowed at the top level or directly in a body", 1, 19),
  );
});

test("internal defines are local to their body and may be mutually recursive", () => {
  const source = `(define (parity n)
    (define (ev? k) (if (= k 0) #t (od? (- k 1))))
    (define (od? k) (if (= k 0) #f (ev? (- k 1))))
    (if (ev? n) 'even 'odd))
  (parity 7)`;
  assert.equal(text(source), "odd");
  assertError("(define (f) (define y 1) y) (f) y", {
    kind: "runtime",
    message: "unbound variable 'y'",
    line: 1,
    column: 33,
  });
});

test("lambda: closures capture their environment", () => {
  assert.equal(text("((lambda (x y) (* x y)) 6 7)"), "42");
  assert.equal(text("(define (adder n) (lambda (x) (+ x n))) ((adder 10) 5)"), "15");
  assert.equal(text("((lambda args args) 1 2)"), "(1 2)");
  assert.equal(
    text(`(define (counter) (let ((n 0)) (lambda () (set! n (+ n 1)) n)))
          (define c (counter)) (c) (c) (c)`),
    "3",
  );
  assertError(
    "(lambda (x))",
    syntax("bad lambda syntax, expected (lambda (params...) body...)", 1, 1),
  );
  assertError("(lambda (x x) x)", syntax("duplicate parameter 'x'", 1, 12));
  assertError("(lambda (1) 1)", syntax("a parameter must be a symbol", 1, 10));
});

test("let, let*, letrec and named let", () => {
  assert.equal(text("(let ((x 2) (y 3)) (* x y))"), "6");
  assert.equal(text("(define x 10) (let ((x 1) (y x)) y)"), "10");
  assert.equal(text("(let* ((x 1) (y (+ x 1)) (z (* y 10))) z)"), "20");
  assert.equal(text("(let* () 5)"), "5");
  assert.equal(
    text(
      "(letrec ((ev? (lambda (n) (if (= n 0) #t (od? (- n 1))))) (od? (lambda (n) (if (= n 0) #f (ev? (- n 1)))))) (ev? 10))",
    ),
    "#t",
  );
  assert.equal(text("(letrec* ((a 1) (b (+ a 1))) b)"), "2");
  assert.equal(
    text("(let loop ((i 0) (acc '())) (if (= i 3) acc (loop (+ i 1) (cons i acc))))"),
    "(2 1 0)",
  );
  assert.equal(text("(let ([x 1] [y 2]) (+ x y))"), "3");
  assertError(
    "(let ((x 1)))",
    syntax("bad let syntax, expected (let ((name value) ...) body...)", 1, 1),
  );
  assertError("(let ((x)) x)", syntax("bad let binding, expected (name value)", 1, 7));
  assertError("(let ((x 1) (x 2)) x)", syntax("duplicate variable 'x' in let", 1, 13));
  assertError("(letrec ((a b) (b 1)) a)", {
    kind: "runtime",
    message: "variable 'b' used before its definition",
    line: 1,
    column: 13,
  });
});

test("cond with else, => and test-only clauses", () => {
  const grade = "(define (grade n) (cond ((>= n 90) 'a) ((>= n 80) 'b) (else 'c)))";
  assert.equal(text(`${grade} (list (grade 95) (grade 85) (grade 10))`), "(a b c)");
  assert.equal(text("(cond ((assv 2 '((1 . one) (2 . two))) => cdr) (else 'none))"), "two");
  assert.equal(text("(cond ((member 2 '(1 2 3))) (else #f))"), "(2 3)");
  assert.equal(text("(cond (#f 1))"), "");
  assertError("(cond (else 1) (#t 2))", syntax("'else' must be the last cond clause", 1, 7));
  assertError("(cond 5)", syntax("bad cond clause, expected (test body...)", 1, 7));
});

test("case, when, unless and do", () => {
  assert.equal(
    text("(case (* 2 3) ((2 3 5 7) 'prime) ((1 4 6 8 9) 'composite) (else 'other))"),
    "composite",
  );
  assert.equal(text("(case 'x ((a) 1) (else 'none))"), "none");
  assert.equal(text("(when (> 1 0) 'a 'b)"), "b");
  assert.equal(text("(when (< 1 0) 'a)"), "");
  assert.equal(text("(unless (< 1 0) 'ran)"), "ran");
  assert.equal(text("(do ((i 0 (+ i 1)) (acc 1 (* acc 2))) ((= i 10) acc))"), "1024");
  assertError("(when #t)", syntax("bad when syntax, expected (when test body...)", 1, 1));
  assertError("(do (x) (#t))", syntax("bad do variable, expected (var init [step])", 1, 6));
});

test("and / or return the deciding value and short-circuit", () => {
  assert.equal(text("(and)"), "#t");
  assert.equal(text("(or)"), "#f");
  assert.equal(text("(and 1 2 3)"), "3");
  assert.equal(text("(and 1 #f (car '()))"), "#f");
  assert.equal(text("(or #f 7 (car '()))"), "7");
  assert.equal(text("(or #f #f)"), "#f");
});

test("begin sequences and set! assigns", () => {
  assert.equal(text("(begin 1 2 3)"), "3");
  assert.equal(text("(begin)"), "");
  assert.equal(text("(begin (define a 1) (define b 2)) (+ a b)"), "3");
  assert.equal(text("(define n 1) (set! n (+ n 41)) n"), "42");
  assert.equal(text("(define n 1) (set! n 5)"), "");
  assertError("(set! undefined-thing 1)", {
    kind: "runtime",
    message: "unbound variable 'undefined-thing'",
    line: 1,
    column: 1,
  });
  assertError("(set! 5 1)", syntax("bad set! syntax, expected (set! name value)", 1, 1));
});

test("special-form names are not variables; applications need a procedure", () => {
  assertError("(+ 1 if)", syntax("'if' is a special form, not a variable", 1, 6));
  assertError("()", syntax("missing procedure in '()'", 1, 1));
  assertError("(+ 1 . 2)", syntax("a procedure call cannot be a dotted list", 1, 1));
  // A local binding shadows a special form name.
  assert.equal(text("(let ((list (lambda xs 'mine))) (list 1))"), "mine");
  assert.equal(text("((lambda (if) (if 1)) (lambda (x) (* x 10)))"), "10");
});
