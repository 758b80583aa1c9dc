// Signed integer overflow traps with its position and a hint (UBSan's
// signed-integer-overflow check); unsigned arithmetic wraps as C says; `wrapv` opts out.
import { test } from "node:test";
import assert from "node:assert/strict";
import { fails, text } from "./helpers.js";

const INT_HINT =
  /^signed integer overflow: the result of '\*' does not fit in int \(int is 32 bits: use long\)$/;

test("int multiplication that overflows traps at the operator, never a wrong value", () => {
  const e = fails("50000*50000");
  assert.equal(e.kind, "runtime");
  assert.match(e.message, INT_HINT);
  assert.deepEqual([e.line, e.column], [1, 6]);
  assert.equal(text("50000L*50000"), "2500000000");
  assert.equal(text("(long)50000*50000"), "2500000000");
});

test("+, -, unary -, ++, -- and compound assignment all trap on int overflow", () => {
  const cases: Array<[string, string, number]> = [
    ["int x = 2147483647;\nint y = x + 1;\ny", "'+'", 2],
    ["int x = -2147483647 - 1;\nint y = x - 1;\ny", "'-'", 2],
    ["int x = -2147483647 - 1;\nint y = -x;\ny", "negation", 2],
    ["int x = 2147483647;\nx++;\nx", "'+'", 2],
    ["int x = -2147483647 - 1;\n--x;\nx", "'+'", 2],
    ["int x = 65536;\nx *= 65536;\nx", "'*'", 2],
    ["int x = 2147483000;\nx += 1000;\nx", "'+'", 2],
  ];
  for (const [src, op, line] of cases) {
    const e = fails(src);
    assert.equal(e.kind, "runtime", src);
    assert.ok(e.message.includes(`result of ${op} does not fit in int`), `${src}: ${e.message}`);
    assert.equal(e.line, line, src);
    assert.ok(e.column > 0, src);
  }
});

test("long arithmetic traps at 64 bits, including multiplication off the fast path", () => {
  for (const src of [
    "long x = 9223372036854775807L; x + 1",
    "long x = -9223372036854775807L - 1; x - 1",
    "long x = -9223372036854775807L - 1; -x",
    "long a = 3037000500L; a * a",
    "long a = -1; long b = -9223372036854775807L - 1; a * b",
    "long a = 4294967296L; long b = 2147483648L; a * b",
  ]) {
    const e = fails(src);
    assert.match(e.message, /does not fit in long/, src);
  }
  assert.equal(text("long a = 3037000499L; a * a"), "9223372030926249001");
  assert.equal(text("long a = -1; long b = -9223372036854775807L; a * b"), "9223372036854775807");
  assert.equal(text("long a = 4294967296L; long b = -2147483648L; a * b"), "-9223372036854775808");
  assert.equal(text("long f = 1; for (int i = 1; i <= 20; i++) f *= i; f"), "2432902008176640000");
});

test("adding or subtracting a constant traps exactly past the bound, on either side", () => {
  // x + c and x - c with a constant c are checked by one compare against the bound c leaves room
  // for: the last value that fits must pass and the next must trap, for each sign of c.
  const bounds = [
    { ty: "int", max: "2147483647", min: "-2147483648", minExpr: "(-2147483647 - 1)" },
    {
      ty: "long",
      max: "9223372036854775807",
      min: "-9223372036854775808",
      minExpr: "(-9223372036854775807L - 1)",
    },
  ];
  for (const { ty, max, min, minExpr } of bounds) {
    const maxExpr = ty === "long" ? `${max}L` : max;
    const ok: Array<[string, string]> = [
      [`${ty} x = ${maxExpr} - 5; x + 5`, max],
      [`${ty} x = ${minExpr} + 5; x - 5`, min],
      [`${ty} x = ${minExpr} + 5; x + -5`, min],
      [`${ty} x = ${maxExpr} - 5; x - -5`, max],
      [`${ty} x = 7; x - 0`, "7"],
      [`${ty} x = -1; x - ${minExpr}`, max],
    ];
    for (const [src, want] of ok) assert.equal(text(src), want, src);
    for (const src of [
      `${ty} x = ${maxExpr} - 4; x + 5`,
      `${ty} x = ${minExpr} + 4; x - 5`,
      `${ty} x = ${minExpr} + 4; x + -5`,
      `${ty} x = ${maxExpr} - 4; x - -5`,
      `${ty} x = 0; x - ${minExpr}`,
    ])
      assert.match(fails(src).message, new RegExp(`does not fit in ${ty}`), src);
  }
});

test("multiplying by a constant traps exactly past the bound, for either sign and order", () => {
  // x * c with a constant c is checked by one range test of x: the first and last x whose
  // product fits must pass and their neighbours outside must trap, with c on either side.
  const floorDiv = (a: bigint, d: bigint): bigint => {
    const q = a / d;
    return q * d !== a && a < 0n !== d < 0n ? q - 1n : q;
  };
  for (const [ty, bits] of [
    ["int", 32n],
    ["long", 64n],
  ] as const) {
    const max = (1n << (bits - 1n)) - 1n;
    const min = -max - 1n;
    const suffix = ty === "long" ? "L" : "";
    const lit = (x: bigint): string =>
      x === min ? `(${min + 1n}${suffix} - 1)` : `${x < 0n ? `(${x}${suffix})` : `${x}${suffix}`}`;
    for (const c of [2n, 3n, 7n, -2n, -3n, 1000n]) {
      const [low, high] =
        c > 0n ? [-floorDiv(-min, c), floorDiv(max, c)] : [-floorDiv(-max, c), floorDiv(min, c)];
      for (const x of [low, high]) {
        assert.equal(text(`${ty} x = ${lit(x)}; x * ${lit(c)}`), String(x * c), `${x} * ${c}`);
        assert.equal(text(`${ty} x = ${lit(x)}; ${lit(c)} * x`), String(c * x), `${c} * ${x}`);
      }
      for (const x of [low - 1n, high + 1n]) {
        const e = fails(`${ty} x = ${lit(x)}; ${lit(c)} * x`);
        assert.match(e.message, new RegExp(`'\\*' does not fit in ${ty}`), `${c} * ${x}`);
        assert.match(fails(`${ty} x = ${lit(x)}; x * ${lit(c)}`).message, /does not fit/);
      }
    }
  }
  // The constant on the left is not evaluated first, which no effect can tell.
  const calls = "int k = 0; int g(void) { k++; return 5; }\nint r = 3 * g();\nk * 100 + r";
  assert.equal(text(calls), "115");
});

test("a counted loop's i++ runs unchecked only where i < bound proves it in range", () => {
  // i < bound in i's own type: i++ cannot overflow, and the loop ends at the bound.
  assert.equal(
    text(
      "int n = 0; int i; for (i = 2147483640; i < 2147483647; i++) n++; n * 10 + (i == 2147483647)",
    ),
    "71",
  );
  // <= and a comparison in a wider type leave room for the increment to overflow: it traps.
  for (const src of [
    "int n = 0;\nfor (int i = 2147483640; i <= 2147483647; i++) n++;\nn",
    "int n = 0;\nfor (int i = 2147483640; i < 2147483650L; i++) n++;\nn",
    "long n = 0;\nfor (long i = 9223372036854775800L; i <= 9223372036854775807L; i++) n++;\nn",
  ]) {
    const e = fails(src);
    assert.match(e.message, /result of '\+' does not fit in (int|long)/, src);
    assert.equal(e.line, 2, src);
  }
});

test("a branch's condition drops only the checks it proves; the rest still trap", () => {
  // Proven: n >= 2 in the else branch and after `if (n < 2) return`, n < 10 in the then branch.
  const fib = "int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\n";
  assert.equal(text(`${fib}fib(24)`), "46368");
  const early = "int fib(int n) {\n  if (n < 2) return n;\n  return fib(n - 1) + fib(n - 2);\n}\n";
  assert.equal(text(`${early}fib(24)`), "46368");
  assert.equal(text("int u(int n) { return n < 10 ? n + 1 : 0; }\nu(9)"), "10");
  const min = "(-2147483647 - 1)";
  const unproven: Array<[string, number, number]> = [
    // The else branch of n > 5 says n <= 5: no lower bound for n - 1.
    [`int g(int n) { return n > 5 ? 0 : n - 1; }\ng(${min})`, 1, 37],
    // n <= INT_MAX leaves no room for + 1.
    ["int u(int n) { return n <= 2147483647 ? n + 1 : 0; }\nu(2147483647)", 1, 43],
    // n is assigned after the guard.
    [
      `int h(int n, int m) {\n  if (n < 2) return 0;\n  n = m;\n  return n - 1;\n}\nh(5, ${min})`,
      4,
      12,
    ],
    // A constant cast to int is compared as its converted value (INT_MIN here): no bound.
    [`int c(int n) { return n >= (int)2147483648L ? n - 1 : 0; }\nc(${min})`, 1, 49],
    // The guard is on another variable.
    [`int k(int n, int m) { return m < 2 ? 0 : n - 1; }\nk(${min}, 7)`, 1, 44],
  ];
  for (const [src, line, column] of unproven) {
    const e = fails(src);
    assert.match(
      e.message,
      /^signed integer overflow: the result of '[+-]' does not fit in int/,
      src,
    );
    assert.deepEqual([e.line, e.column], [line, column], src);
  }
});

test("an overflow inside a function names the line and column of the operator", () => {
  const e = fails(`int square(int v) {
  return v * v;
}
int main() { return square(100000) > 0; }`);
  assert.deepEqual([e.line, e.column], [2, 12]);
});

test("unsigned arithmetic wraps modulo 2^n, as C defines it", () => {
  assert.equal(text("unsigned x = 4294967295u; x + 1"), "0");
  assert.equal(text("unsigned x = 0; x - 1"), "4294967295");
  assert.equal(text("unsigned long x = 18446744073709551615UL; x * 2"), "18446744073709551614");
  assert.equal(text("unsigned h = 2166136261u; h = (h ^ 97) * 16777619u; h"), "3826002220");
});

test("char and short arithmetic happens in int and converts back without trapping", () => {
  assert.equal(text("char c = 127; c++; c"), "-128");
  assert.equal(text("short s = 32767; s = s + 1; s"), "-32768");
});

test("constant expressions fold unless they overflow; then the operator traps at run time", () => {
  assert.equal(text("int x = 2147483647 - 1 + 1; x"), "2147483647");
  assert.equal(text("int m = -2147483647 - 1; m"), "-2147483648");
  assert.match(fails("2147483647 + 1").message, /does not fit in int/);
  // Dead code never traps.
  assert.equal(text("int r = 0; if (0) r = 2147483647 + 1; r"), "0");
});

test("wrapv (gcc -fwrapv) makes signed arithmetic wrap instead", () => {
  assert.equal(text("50000*50000", { wrapv: true }), "-1794967296");
  assert.equal(text("int x = 2147483647; x++; x", { wrapv: true }), "-2147483648");
  assert.equal(
    text("long x = 9223372036854775807L; x + 1", { wrapv: true }),
    "-9223372036854775808",
  );
});
