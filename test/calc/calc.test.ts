// [CALC: …]: arithmetic with C semantics, validated as an expression and run by the C VM.
import { test } from "node:test";
import assert from "node:assert/strict";
import { findCalcProblem, runCalc } from "../../src/calc/calc.js";
import { injectionText } from "../../src/vm/result.js";

function value(expr: string): string {
  const outcome = runCalc(expr);
  if (!outcome.ok) {
    const e = outcome.error;
    assert.fail(
      `expected a value for ${expr}, got ${e.kind}: ${e.message} at ${e.line}:${e.column}`,
    );
  }
  return outcome.text;
}

function error(expr: string): { kind: string; message: string; line: number; column: number } {
  const outcome = runCalc(expr);
  if (outcome.ok) assert.fail(`expected an error for ${expr}, got ${outcome.text}`);
  return outcome.error;
}

test("the seed's examples", () => {
  assert.equal(injectionText(runCalc("7*6")), "42");
  assert.equal(value("2 + 3 * 4"), "14");
  assert.equal(value("(2 + 3) * 4"), "20");
  assert.equal(value("3 + (-5)"), "-2");
  assert.equal(value("-5"), "-5");
  assert.equal(value("2847*3921"), "11163087");
});

test("C's operators and precedence: integer division, %, bitwise operators, shifts, hex, octal", () => {
  assert.equal(value("7 / 2"), "3");
  assert.equal(value("-7 / 2"), "-3");
  assert.equal(value("-7 % 3"), "-1");
  assert.equal(value("0x1F & 0xF0 | 3"), "19");
  assert.equal(value("6 ^ 3"), "5");
  assert.equal(value("~0"), "-1");
  assert.equal(value("1 << 10"), "1024");
  assert.equal(value("-16 >> 2"), "-4");
  assert.equal(value("017"), "15");
  assert.equal(value("1 + 2 << 3"), "24");
  assert.equal(value("2147483647 + 1"), "2147483648");
  assert.equal(value("3--2"), "5");
  assert.equal(value("- -3"), "3");
});

test("the value carries the C type", () => {
  const small = runCalc("7*6");
  assert.ok(small.ok);
  assert.deepEqual(small.value, { ctype: "int", value: 42 });
  const wide = runCalc("9999999999 * 9");
  assert.ok(wide.ok);
  assert.equal(wide.value.ctype, "long");
  assert.equal(wide.text, "89999999991");
  const real = runCalc("1.5 * 4");
  assert.ok(real.ok);
  assert.equal(real.value.ctype, "double");
});

test("names, calls, statements and braces are refused with their position", () => {
  assert.deepEqual(error("2 * x"), {
    kind: "syntax",
    message: "names are not allowed in CALC: 'x' (only numbers and operators)",
    line: 1,
    column: 5,
  });
  assert.deepEqual(error("sqrt(16)"), {
    kind: "syntax",
    message: "function calls are not allowed in CALC: 'sqrt'",
    line: 1,
    column: 1,
  });
  assert.deepEqual(error("1; 2"), {
    kind: "syntax",
    message: "unexpected ';': CALC takes a single expression",
    line: 1,
    column: 2,
  });
  assert.deepEqual(error("{1}"), {
    kind: "syntax",
    message: "unexpected '{' (CALC allows numbers, + - * / % & | ^ ~ << >> and parentheses)",
    line: 1,
    column: 1,
  });
  assert.deepEqual(error("1 +\n  y"), {
    kind: "syntax",
    message: "names are not allowed in CALC: 'y' (only numbers and operators)",
    line: 2,
    column: 3,
  });
  assert.equal(
    error("2 < 3").message,
    "unexpected '<' (CALC allows numbers, + - * / % & | ^ ~ << >> and parentheses)",
  );
  assert.deepEqual(error("12ab"), {
    kind: "syntax",
    message: "unexpected 'a' in a number",
    line: 1,
    column: 3,
  });
});

test("malformed expressions are reported in CALC's own terms", () => {
  const cases: Array<[string, string, number, number]> = [
    ["", "empty expression", 1, 1],
    ["   ", "empty expression", 1, 1],
    ["2 +", "expected a number at the end of the expression", 1, 4],
    ["(1", "unclosed '('", 1, 1],
    ["1 + (2", "unclosed '('", 1, 5],
    ["(2))", "unexpected ')'", 1, 4],
    ["()", "expected a number before ')'", 1, 2],
    ["2**3", "expected a number before '*'", 1, 3],
    ["2 3", "expected an operator before '3'", 1, 3],
    ["(2)(3)", "expected an operator before '('", 1, 4],
  ];
  for (const [expr, message, line, column] of cases) {
    assert.deepEqual(error(expr), { kind: "syntax", message, line, column }, expr);
    assert.deepEqual(findCalcProblem(expr), { message, line, column }, expr);
  }
  assert.equal(findCalcProblem("1 + 2"), null);
});

test("integers are exact at any size: no overflow, no wrap", () => {
  assert.equal(value("123456789*987654321"), "121932631112635269");
  assert.equal(value("50000 * 50000"), "2500000000");
  assert.equal(value("9223372036854775807 + 1"), "9223372036854775808");
  assert.equal(value("-9223372036854775807 - 2"), "-9223372036854775809");
  assert.equal(value("1 << 100"), "1267650600228229401496703205376");
  assert.equal(value("(1 << 100) >> 98"), "4");
  assert.equal(value("99999999999999999999 / 7"), "14285714285714285714");
  assert.equal(value("-99999999999999999999 % 7"), "-1");
  assert.equal(value("0xFFFFFFFFFFFFFFFFFF + 1"), "4722366482869645213696");
  const big = runCalc("1 << 64");
  assert.ok(big.ok);
  assert.deepEqual(big.value, { ctype: "integer", value: 1n << 64n });
});

test("decimal numbers make an operation double-precision; bit operators refuse them", () => {
  assert.equal(value("1 / 4.0"), "0.25");
  assert.equal(value("0.1 + 0.2"), "0.30000000000000004");
  assert.equal(value("3 / 2 * 1.0"), "1");
  assert.deepEqual(error("1.5 % 2"), {
    kind: "type",
    message: "operator '%' needs integers, not a decimal number",
    line: 1,
    column: 5,
  });
});

test("results past the size limit and negative shifts are errors with their position", () => {
  assert.deepEqual(error("1 << 100000"), {
    kind: "limit",
    message: "result is larger than 65536 bits (the CALC size limit)",
    line: 1,
    column: 3,
  });
  assert.equal(error("1 << -1").message, "negative shift count -1");
  assert.equal(runCalc("1 << 100000", { maxBits: 200_000 }).ok, true);
});

test("run-time errors point into the CALC text", () => {
  assert.deepEqual(error("5 / 0"), {
    kind: "runtime",
    message: "division by zero",
    line: 1,
    column: 3,
  });
  assert.deepEqual(error("1 +\n  5   %   (3 - 3)"), {
    kind: "runtime",
    message: "division by zero",
    line: 2,
    column: 7,
  });
});
