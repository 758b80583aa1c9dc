// Errors name the problem and where it is: the inputs that once produced "internal error" or an
// error without line:col each end in a positioned, named error now.
import { test } from "node:test";
import assert from "node:assert/strict";
import { runC } from "../../src/vm/index.js";

const CASES: Array<[string, string, RegExp]> = [
  ["char x[1e400];", "1:8", /^array size Infinity is not a finite number$/],
  ["enum { A = 1e400 }; A", "1:12", /^expected a constant integer, but Infinity is not finite$/],
  [
    "int x = 1;\nswitch (x) { case 1e400: return 1; }\nreturn 0;",
    "2:19",
    /^expected a constant integer/,
  ],
  ["int g[2] = {[-1] = 7};\ng[0]", "1:14", /^array designator \[-1\] is negative$/],
  [`${"(".repeat(100_000)}1${")".repeat(100_000)}`, "1:", /^program is nested too deeply$/],
  [
    "int f(int n) { return n ? f(n - 1) + 1 : 0; }\nf(100000000)",
    "1:",
    /^stack overflow \(call depth limit 262144; raise maxCallDepth/,
  ],
  ["int big = 2147483647;\nbig * 2", "2:5", /^signed integer overflow/],
  ["for (;;) {}", "1:1", /^instruction limit exceeded \(\d+ instructions; raise maxInstructions/],
];

test("each error has a position and names the problem; none is an internal error", () => {
  for (const [source, where, message] of CASES) {
    const r = runC(source, { limits: { maxInstructions: 50_000_000 } });
    assert.ok(!r.ok, source.slice(0, 60));
    const e = r.error;
    assert.ok(!/internal error/.test(e.message), e.message);
    assert.match(e.message, message, source.slice(0, 60));
    assert.ok(e.line > 0 && e.column > 0, `${e.message} has no position`);
    assert.ok(`${e.line}:${e.column}`.startsWith(where), `${e.message} at ${e.line}:${e.column}`);
  }
});

test("printf precision above 100 prints the exact decimal expansion, as glibc does", () => {
  const r = runC('printf("%.101f|%.120f", 1.0, 0.1);');
  assert.ok(r.ok, r.ok ? "" : r.error.message);
  // 0.1 is 0.1000000000000000055511151231257827021181583404541015625 exactly.
  assert.equal(
    r.stdout,
    `1.${"0".repeat(101)}|0.1000000000000000055511151231257827021181583404541015625${"0".repeat(65)}`,
  );
});
