// The primitive procedures: exact and float arithmetic, comparison, lists, strings, output and
// the higher-order procedures that call back into Lisp.
import { test } from "node:test";
import assert from "node:assert/strict";
import { text } from "./helpers.js";

const cases = (pairs: Array<[string, string]>): void => {
  for (const [source, expected] of pairs) assert.equal(text(source), expected, source);
};

test("exact integer arithmetic of any size", () => {
  cases([
    ["(+)", "0"],
    ["(*)", "1"],
    ["(- 5)", "-5"],
    ["(- 10 1 2 3)", "4"],
    ["(* 99999999999 99999999999)", "9999999999800000000001"],
    ["(expt 2 100)", "1267650600228229401496703205376"],
    ["(expt 7 0)", "1"],
    ["(/ 12 4)", "3"],
    ["(abs -7)", "7"],
    ["(min 3 1 2)", "1"],
    ["(max 3 1 2)", "3"],
    ["(gcd 12 18)", "6"],
    ["(lcm 4 6)", "12"],
    ["(square 12)", "144"],
    ["(sqrt 144)", "12"],
    ["(exact-integer-sqrt 17)", "4"],
  ]);
});

test("quotient, remainder, modulo and mod follow Scheme's signs", () => {
  cases([
    ["(quotient 17 5)", "3"],
    ["(quotient -17 5)", "-3"],
    ["(remainder 17 5)", "2"],
    ["(remainder -17 5)", "-2"],
    ["(modulo -17 5)", "3"],
    ["(modulo 17 -5)", "-3"],
    ["(mod 17 5)", "2"],
    ["(mod -7 2)", "1"],
    ["(quotient 7.0 2)", "3.0"],
  ]);
});

test("floats: contagion, division, rounding and printing", () => {
  cases([
    ["(+ 1 2.5)", "3.5"],
    ["(/ 7 2)", "3.5"],
    ["(* 1.0 2)", "2.0"],
    ["(exact->inexact 1)", "1.0"],
    ["(inexact->exact 4.0)", "4"],
    ["(exact 2.0)", "2"],
    ["(floor 2.5)", "2.0"],
    ["(ceiling 2.1)", "3.0"],
    ["(round 2.5)", "2.0"],
    ["(round 3.5)", "4.0"],
    ["(truncate -2.7)", "-2.0"],
    ["(floor 7)", "7"],
    ["(sqrt 2)", "1.4142135623730951"],
    ["(expt 2 -1)", "0.5"],
    ["(expt 2.0 10)", "1024.0"],
    ["(/ 1.0 0.0)", "+inf.0"],
    ["(max 1 2.0)", "2.0"],
    ["1e21", "1e21"],
    ["-0.0", "-0.0"],
    ["(exp 0)", "1.0"],
    ["(atan 1 1)", "0.7853981633974483"],
  ]);
});

test("numeric predicates and chained comparisons", () => {
  cases([
    ["(< 1 2 3)", "#t"],
    ["(< 1 3 2)", "#f"],
    ["(>= 3 3 1)", "#t"],
    ["(= 1 1.0)", "#t"],
    ["(<= 1 2)", "#t"],
    ["(number? 1.5)", "#t"],
    ["(integer? 2.0)", "#t"],
    ["(integer? 2.5)", "#f"],
    ["(exact? 1)", "#t"],
    ["(inexact? 1.0)", "#t"],
    ["(zero? 0)", "#t"],
    ["(positive? -1)", "#f"],
    ["(negative? -1)", "#t"],
    ["(odd? 7)", "#t"],
    ["(even? 7)", "#f"],
    ["(number->string 255 16)", "ff"],
    ['(string->number "42")', "42"],
    ['(string->number "2.5")', "2.5"],
    ['(string->number "nope")', "#f"],
  ]);
});

test("equality and booleans", () => {
  cases([
    ["(not #f)", "#t"],
    ["(not 0)", "#f"],
    ["(eq? 'a 'a)", "#t"],
    ["(eqv? 100000000000000000000 100000000000000000000)", "#t"],
    ["(eq? '(1) '(1))", "#f"],
    ['(equal? \'(1 (2 "x")) \'(1 (2 "x")))', "#t"],
    ["(equal? '(1 2) '(1 3))", "#f"],
    ["(boolean? #f)", "#t"],
  ]);
});

test("list primitives", () => {
  cases([
    ["(cons 1 '(2))", "(1 2)"],
    ["(car '(1 2))", "1"],
    ["(cdr '(1 2))", "(2)"],
    ["(cadr '(1 2 3))", "2"],
    ["(cddr '(1 2 3))", "(3)"],
    ["(caddr '(1 2 3))", "3"],
    ["(list 1 2 3)", "(1 2 3)"],
    ["(list)", "()"],
    ["(null? '())", "#t"],
    ["(null? '(1))", "#f"],
    ["(pair? '(1))", "#t"],
    ["(pair? '())", "#f"],
    ["(list? '(1 2))", "#t"],
    ["(list? (cons 1 2))", "#f"],
    ["(length '(1 2 3))", "3"],
    ["(append '(1) '(2 3) '() '(4))", "(1 2 3 4)"],
    ["(append '(1) 2)", "(1 . 2)"],
    ["(reverse '(1 2 3))", "(3 2 1)"],
    ["(list-ref '(a b c) 2)", "c"],
    ["(list-tail '(a b c) 1)", "(b c)"],
    ["(memq 'c '(a b c d))", "(c d)"],
    ["(member '(1) '((0) (1) (2)))", "((1) (2))"],
    ["(memv 5 '(1 2))", "#f"],
    ["(assq 'b '((a 1) (b 2)))", "(b 2)"],
    ['(assoc "b" \'(("a" . 1) ("b" . 2)))', '("b" . 2)'],
    ["(last-pair '(1 2 3))", "(3)"],
    ["(iota 5)", "(0 1 2 3 4)"],
    ["(iota 3 1)", "(1 2 3)"],
    ["(define p (list 1 2)) (set-car! p 9) (set-cdr! (cdr p) '(3)) p", "(9 2 3)"],
    ["(list-copy '(1 2))", "(1 2)"],
  ]);
});

test("map, for-each, filter, folds, reduce and apply", () => {
  cases([
    ["(map (lambda (x) (* x x)) '(1 2 3))", "(1 4 9)"],
    ["(map + '(1 2 3) '(10 20 30))", "(11 22 33)"],
    ["(map car '((a 1) (b 2)))", "(a b)"],
    ["(filter odd? '(1 2 3 4 5))", "(1 3 5)"],
    ["(foldl cons '() '(1 2 3))", "(3 2 1)"],
    ["(foldr cons '() '(1 2 3))", "(1 2 3)"],
    ["(fold-left list '() '(1 2))", "((() 1) 2)"],
    ["(fold-right list '() '(1 2))", "(1 (2 ()))"],
    ["(reduce + 0 '(1 2 3 4))", "10"],
    ["(reduce + 0 '())", "0"],
    ["(reduce max 0 '(3 9 2))", "9"],
    ["(apply + 1 2 '(3 4))", "10"],
    ["(apply max '(4 8 2))", "8"],
    ["(define total 0) (for-each (lambda (x) (set! total (+ total x))) '(1 2 3)) total", "6"],
    ["(map (lambda (x) (map (lambda (y) (* x y)) '(1 2))) '(1 2))", "((1 2) (2 4))"],
  ]);
  // sort is a stable merge sort taking either argument order.
  cases([
    ["(sort '(5 3 9 1 4 1 8) <)", "(1 1 3 4 5 8 9)"],
    ["(sort > '(1 3 2))", "(3 2 1)"],
    ["(sort '() <)", "()"],
    [
      "(sort '((1 . a) (0 . b) (1 . c) (0 . d)) (lambda (x y) (< (car x) (car y))))",
      "((0 . b) (0 . d) (1 . a) (1 . c))",
    ],
    [
      "(define r (map (lambda (i) (modulo (* i 7919) 1000)) (iota 1001))) (list-ref (sort r <) 500)",
      "499",
    ],
  ]);
  // Higher-order calls run on the evaluator, so a map over a long list is fine.
  assert.equal(text("(length (map (lambda (x) (+ x 1)) (iota 100000)))"), "100000");
});

test("strings and symbols", () => {
  cases([
    ['(string-append "foo" "bar")', "foobar"],
    ['(string-length "hello")', "5"],
    ['(substring "hello" 1 3)', "el"],
    ['(substring "hello" 2)', "llo"],
    ['(string=? "a" "a")', "#t"],
    ['(string<? "a" "b")', "#t"],
    ['(string>? "a" "b")', "#f"],
    ['(string-upcase "abc")', "ABC"],
    ['(string-downcase "ABC")', "abc"],
    ['(string->symbol "xyz")', "xyz"],
    ["(symbol->string 'abc)", "abc"],
    ['(string->list "ab")', '("a" "b")'],
    ["(number->string 42)", "42"],
    ['(string? "s")', "#t"],
    ["(symbol? 's)", "#t"],
    ["(procedure? car)", "#t"],
    ["(procedure? (lambda () 1))", "#t"],
    ["(procedure? 'car)", "#f"],
  ]);
});

test("display, write, displayln and newline", () => {
  cases([
    ['(display "a") (display 1) (display 2.5) (display #t)', "a12.5#t"],
    ['(write "a\\nb")', '"a\\nb"'],
    ['(display \'(1 "x" (y)))', "(1 x (y))"],
    ['(write \'(1 "x"))', '(1 "x")'],
    ['(displayln "line")', "line\n"],
    ["(newline)", "\n"],
    ["(display (list 1.0 -2 'sym))", "(1.0 -2 sym)"],
    ["(display car)", "#<procedure car>"],
    ["(void)", ""],
  ]);
});
