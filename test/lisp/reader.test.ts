// The reader: atoms, comments and every syntax error with its line:column.
import { test } from "node:test";
import assert from "node:assert/strict";
import { read, MAX_NESTING } from "../../src/lisp/reader.js";
import { sym } from "../../src/lisp/values.js";
import { assertError, text } from "./helpers.js";

const syntax = (message: string, line: number, column: number) => ({
  kind: "syntax" as const,
  message,
  line,
  column,
});

test("atoms: integers, floats, hex, booleans, strings, symbols", () => {
  const forms = read('42 -7 +3 1.5 .5 -2e3 #xff #b101 #t #false "a\\tb\\x41;" foo-bar? +');
  assert.deepEqual(
    forms.map((f) => (f.kind === "atom" ? f.value : null)),
    [42n, -7n, 3n, 1.5, 0.5, -2000, 255n, 5n, true, false, "a\tbA", sym("foo-bar?"), sym("+")],
  );
});

test("forms carry the line:column of each element", () => {
  const [form] = read("\n  (define\n    (f x) x)");
  assert.equal(form.kind, "list");
  assert.deepEqual([form.line, form.column], [2, 3]);
  if (form.kind !== "list") return;
  const params = form.items[1];
  assert.deepEqual([params.line, params.column], [3, 5]);
});

test("comments: line, block (nested) and none of them reach the evaluator", () => {
  assert.equal(text("; comment\n(+ 1 #| block #| nested |# |# 2) ; trailing"), "3");
});

test("unbalanced parentheses name the unclosed or unexpected one", () => {
  assertError("(+ 1 2", syntax("unclosed '('", 1, 1));
  assertError("(define (f x)\n  (+ x 1)", syntax("unclosed '('", 1, 1));
  assertError("(+ 1 (* 2 3)", syntax("unclosed '('", 1, 1));
  assertError("(+ 1 2))", syntax("unexpected ')'", 1, 8));
  assertError("\n\n   )", syntax("unexpected ')'", 3, 4));
  assertError("(+ 1 2]", syntax("']' does not match the '(' at 1:1", 1, 7));
});

test("string errors: bad escapes and unterminated strings", () => {
  assertError('(display "a\\qb")', syntax("bad string escape '\\q'", 1, 12));
  assertError('(display "abc', syntax("unterminated string", 1, 10));
  assertError('"\\x41"', syntax("bad string escape '\\x' (expected \\x<hex digits>;)", 1, 2));
});

test("quote, dot and # syntax errors", () => {
  assertError("(list ')", syntax("expected a datum after '''", 1, 7));
  assertError("'", syntax("expected a datum after '''", 1, 1));
  assertError("'(1 . )", syntax("expected a datum after '.'", 1, 7));
  assertError("'(1 . 2 3)", syntax("expected ')' after the tail of a dotted list", 1, 9));
  assertError("(. 1)", syntax("unexpected '.'", 1, 2));
  assertError("#q", syntax("unknown syntax '#q'", 1, 1));
  assertError("#xZZ", syntax("bad number '#xZZ'", 1, 1));
  assertError("#\\a", syntax("characters ('#\\a') are not supported; use strings", 1, 1));
  assertError("#| open", syntax("unterminated block comment '#|'", 1, 1));
});

test("nesting deeper than the reader's bound is refused cleanly", () => {
  const deep = "(".repeat(MAX_NESTING + 1) + ")".repeat(MAX_NESTING + 1);
  assertError(
    deep,
    syntax(`nesting too deep (more than ${MAX_NESTING} levels)`, 1, MAX_NESTING + 1),
  );
  const fine = "(list ".repeat(200) + ")".repeat(200);
  assert.equal(text(`(length ${fine})`), "1");
});

test("derived forms too nested for the compiler give a syntax error at the form", () => {
  const clauses = Array.from({ length: 20000 }, (_, i) => `((= 1 ${i}) ${i})`).join(" ");
  assertError(`'ok\n (cond ${clauses})`, syntax("program too deeply nested", 2, 2));
});
