// The three ways models write code: a bare expression, definitions then statements ending in
// return, and a whole program with main().
import { test } from "node:test";
import assert from "node:assert/strict";
import { ok, text } from "./helpers.js";

test("an expression is evaluated: 847*293", () => {
  assert.equal(text("847*293"), "248171");
  assert.equal(text("(1 + 2) * 3 - 4 / 2"), "7");
});

test("definitions followed by statements ending in return", () => {
  assert.equal(text("int f(int n){int r=1;while(n>1){r=r*n;n=n-1;}return r;} return f(5);"), "120");
  assert.equal(
    text("int gcd(int a,int b){while(b!=0){int t=b;b=a%b;a=t;}return a;} return gcd(48,18);"),
    "6",
  );
  assert.equal(
    text(
      "int fib(int n){int a=0,b=1;for(int i=0;i<n;i++){int t=a+b;a=b;b=t;}return a;} return fib(10);",
    ),
    "55",
  );
});

test("a trailing expression statement is the value when there is no return", () => {
  assert.equal(text("int x = 6; x * 7;"), "42");
  assert.equal(text("int x = 6; x * 7"), "42");
});

test("a program with main: printed text wins, else main's return value", () => {
  const printed = ok(`#include <stdio.h>
int main() {
    int sum = 0;
    for (int i = 1; i <= 100; i++) sum += i;
    printf("%d", sum);
    return 0;
}`);
  assert.equal(printed.text, "5050");
  assert.equal(printed.stdout, "5050");
  assert.deepEqual(printed.value, { ctype: "int", value: 0 });
  const silent = ok("int main(void) { return 6 * 7; }");
  assert.equal(silent.text, "42");
  assert.equal(silent.stdout, "");
});

test("the typed return value carries the C type", () => {
  assert.deepEqual(ok("return 142913828922;").value, { ctype: "long", value: 142913828922n });
  assert.deepEqual(ok("return 1.5 * 2;").value, { ctype: "double", value: 3 });
  assert.deepEqual(ok("return 'a';").value, { ctype: "int", value: 97 });
  assert.deepEqual(ok("unsigned u = 4000000000u; return u;").value, {
    ctype: "unsigned int",
    value: 4000000000,
  });
  assert.deepEqual(ok('return "hello";').value, { ctype: "char *", value: "hello" });
  assert.deepEqual(ok("int f(void){return 1;}").value, { ctype: "void", value: null });
});

test("run time measures execution: more work takes longer, within the call's own time", () => {
  const timed = (source: string) => {
    const t0 = performance.now();
    const r = ok(source);
    const wall = performance.now() - t0;
    assert.ok(r.stats.compileMs + r.stats.runMs <= wall, source);
    return r.stats;
  };
  // The fastest of a few runs each: one run of either can take a collector's pause or a
  // first-call compile on a loaded machine (light read 4.3 ms against heavy's 2.1 once).
  const fastest = (source: string) =>
    [1, 2, 3].map(() => timed(source)).reduce((a, b) => (b.runMs < a.runMs ? b : a));
  const light = fastest("return 1;");
  const heavy = fastest("int s = 0; for (int i = 0; i < 3000000; i++) s ^= i * 7; return s;");
  assert.ok(heavy.runMs > light.runMs, `${heavy.runMs} ms vs ${light.runMs} ms`);
  assert.ok(heavy.instructions > 1000 * Math.max(1, light.instructions));
});

test("stats report compile time, run time, instructions and memory", () => {
  const r = ok(
    "int s = 0; for (int i = 0; i < 1000; i++) s += i; char *p = malloc(4000); p[0] = 1; return s;",
  );
  assert.equal(r.text, "499500");
  assert.ok(r.stats.compileMs > 0);
  assert.ok(r.stats.runMs > 0);
  assert.ok(r.stats.instructions >= 1000, `instructions ${r.stats.instructions}`);
  assert.ok(r.stats.memoryBytes >= 4000, `memory ${r.stats.memoryBytes}`);
});
