// Functions that may recurse carry their fuel and call depth in parameters (codegen's metered
// bodies and their wrappers): every call is still charged and every nesting still counted,
// whether the recursion is direct, mutual, through a function pointer or through functions
// that do not recurse themselves.
import { test } from "node:test";
import assert from "node:assert/strict";
import { fails, ok, text } from "./helpers.js";

const DEPTH_LIMIT = /^stack overflow \(call depth limit 50; raise maxCallDepth/;

/** How many calls fib(n) makes, computed here the same way the C program recurses. */
function fibCalls(n: number): number {
  return n < 2 ? 1 : 1 + fibCalls(n - 1) + fibCalls(n - 2);
}

test("every recursive call burns fuel: the count covers the calls, and the limit stops them", () => {
  const fib = "int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\n";
  const r = ok(`${fib}fib(20)`);
  assert.equal(r.text, "6765");
  assert.ok(r.stats.instructions >= fibCalls(20), `instructions ${r.stats.instructions}`);
  const e = fails(`${fib}fib(32)`, { limits: { maxInstructions: 1_000_000 } });
  assert.match(e.message, /^instruction limit exceeded \(1000000 instructions/);
  assert.deepEqual([e.line, e.column], [1, 5]);
});

test("call depth counts across functions that do not recurse and is restored when they return", () => {
  const limits = { maxCallDepth: 50 };
  // k recurses 31 deep below f's 31 frames, through g, which does not recurse: 62 > 50.
  const chain =
    "int k(int n) { return n ? k(n - 1) : 0; }\n" +
    "int g(int n) { return k(n); }\n" +
    "int f(int n) { return n ? f(n - 1) : g(30); }\n";
  const deep = fails(`${chain}f(30)`, { limits });
  assert.match(deep.message, DEPTH_LIMIT);
  assert.equal(deep.line, 1);
  assert.equal(text(`${chain}f(10)`, { limits }), "0");
  // A loop calls a 41-deep recursion 100 times: the depth returns to 0 after each.
  const loop =
    "int r(int n) { return n ? 1 + r(n - 1) : 0; }\n" +
    "int s(void) { int t = 0; for (int i = 0; i < 100; i++) t += r(40); return t; }\n";
  assert.equal(text(`${loop}s()`, { limits }), "4000");
});

test("mutual recursion and recursion through a function pointer are metered alike", () => {
  const mutual =
    "int odd(int n);\n" +
    "int even(int n) { return n == 0 ? 1 : odd(n - 1); }\n" +
    "int odd(int n) { return n == 0 ? 0 : even(n - 1); }\n";
  assert.equal(text(`${mutual}even(40)`), "1");
  assert.match(fails(`${mutual}even(60)`, { limits: { maxCallDepth: 50 } }).message, DEPTH_LIMIT);
  const pointer =
    "int (*self)(int);\n" +
    "int down(int n) { return n ? 1 + self(n - 1) : 0; }\n" +
    "int start(int n) { self = down; return self(n); }\n";
  assert.equal(text(`${pointer}start(45)`, { limits: { maxCallDepth: 50 } }), "45");
  assert.match(fails(`${pointer}start(60)`, { limits: { maxCallDepth: 50 } }).message, DEPTH_LIMIT);
});

test("a recursive function that prints, allocates and loops keeps its fuel and output", () => {
  const src = `#include <stdio.h>
#include <stdlib.h>
int walk(int n) {
  if (n == 0) return 0;
  int *cells = malloc(16 * sizeof(int));
  int sum = 0;
  for (int i = 0; i < 16; i++) cells[i] = i * n;
  for (int i = 0; i < 16; i++) sum += cells[i];
  free(cells);
  printf("%d ", sum);
  return sum + walk(n - 1);
}
int main() { printf("= %d\\n", walk(4)); return 0; }
`;
  const r = ok(src);
  assert.equal(r.stdout, "480 360 240 120 = 1200\n");
  // 4 calls, each running two 16-iteration loops.
  assert.ok(r.stats.instructions >= 4 * 32, `instructions ${r.stats.instructions}`);
});

test("the depth limit stays exact though a call tests its depth only when its fuel runs out", () => {
  // The host hands out no more fuel than the calls still allowed to nest, so the frame past
  // the limit always finds its fuel gone: the limit is exact after any amount of fuel used.
  const limits = { maxCallDepth: 50 };
  const down = "int down(int n) { return n ? 1 + down(n - 1) : 0; }\n";
  assert.equal(text(`${down}down(49)`, { limits }), "49"); // 50 frames
  assert.match(fails(`${down}down(50)`, { limits }).message, DEPTH_LIMIT);
  const after =
    "int s(int last) { int t = 0; for (int i = 0; i < 1000; i++) t += down(i % 50); " +
    "return t + down(last); }\n";
  assert.equal(text(`${down}${after}s(49)`, { limits }), String(1000 * 24.5 + 49));
  assert.match(fails(`${down}${after}s(50)`, { limits }).message, DEPTH_LIMIT);
  // A tree recursion: fib(n) nests n - 1 frames, since fib's calls of itself test its base
  // case first and take the leaves fib(1) and fib(0) without a call (src/c/base-case.ts).
  const fib = "int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\n";
  const twenty = { maxCallDepth: 20 };
  assert.equal(text(`${fib}fib(21)`, { limits: twenty }), "10946");
  const deep = fails(`${fib}fib(22)`, { limits: twenty });
  assert.match(deep.message, /^stack overflow \(call depth limit 20; raise maxCallDepth/);
  assert.deepEqual([deep.line, deep.column], [1, 5]);
});

test("a function's calls of itself take a pure base case in place, with its value and traps", () => {
  // src/c/base-case.ts: the base case is evaluated on the arguments at the call site.
  const fact = "int fact(int n) { if (n <= 1) return 1; return n * fact(n - 1); }\n";
  assert.equal(text(`${fact}fact(12)`), "479001600");
  const m91 = "int m(int n) { return n > 100 ? n - 10 : m(m(n + 11)); }\n";
  assert.equal(text(`${m91}m(1) + m(50) * 1000 + m(101) * 1000000`), "91091091");
  const fib = "long fib(long n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\n";
  assert.equal(text(`${fib}fib(32)`), "2178309");
  // A trap in the base case keeps the operator's position.
  const line = "int h(int n) { if (n < 1) return 2147483647 + n + 1; return h(n - 1); }";
  const e = fails(`${line}\nh(3)`);
  assert.match(e.message, /result of '\+' does not fit in int/);
  assert.deepEqual([e.line, e.column], [1, line.indexOf("+ 1") + 1]);
  // Every leaf still pays for the call it replaces.
  const r = ok(`${fib}fib(20)`);
  assert.ok(r.stats.instructions >= fibCalls(20), `instructions ${r.stats.instructions}`);
});
