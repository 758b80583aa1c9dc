// Counted loops (metering.ts): charged once up front, including loops whose step is a local
// proven positive (`for (long j = i * i; j < n; j += i)` inside `for (int i = 2; ...)`); the
// charge never wraps, so no loop runs unmetered; and `j += i` goes unchecked only where the
// types prove it cannot overflow.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../../src/paths.js";
import { fails, ok, text } from "./helpers.js";

const LIMIT = /^instruction limit exceeded \(1000000 instructions/;
const tiny = { profile: "tiny" as const };

test("a 64-bit counted loop over more than 2^63 values is charged, not left unmetered", () => {
  for (const src of [
    "long n = 0; for (long j = -9223372036854775807L - 1; j < 9223372036854775807L; j++) n += 1; n",
    "long n = 0; for (long j = -9223372036854775807L - 1; j <= 9223372036854775807L; j += 3) n += 1; n",
    "unsigned long n = 0; for (unsigned long j = 0; j < 18446744073709551615UL; j++) n += 1; n",
  ])
    assert.match(fails(src, tiny).message, LIMIT, src);
  // Bounds below the start run no iteration and charge none.
  assert.equal(
    text(
      "long n = 0; for (long j = 9223372036854775807L; j < -9223372036854775807L; j++) n++; n",
      tiny,
    ),
    "0",
  );
});

test("a loop stepping by a positive local is counted and charged for every iteration", () => {
  // The benchmark's own sieve (bench/programs/sieve_2m.c), with its limit replaced.
  const program = readFileSync(join(packageRoot, "bench", "programs", "sieve_2m.c"), "utf8");
  assert.match(program, /int limit = 2000000;/);
  const sieve = (limit: number): string =>
    program.replace("int limit = 2000000;", `int limit = ${limit};`);
  // Primes below 1000, summed here in the test.
  let expected = 0;
  for (let p = 2; p < 1000; p++) {
    let prime = true;
    for (let d = 2; d * d <= p; d++) if (p % d === 0) prime = false;
    if (prime) expected += p;
  }
  const r = ok(sieve(1000));
  assert.equal(r.stdout, `${expected}\n`);
  // The inner loops write about 2,000 cells: each write is charged.
  assert.ok(r.stats.instructions > 2000, `instructions ${r.stats.instructions}`);
  assert.match(fails(sieve(2_000_000), tiny).message, LIMIT);
});

test("a step that is not proven positive is metered per iteration (a zero step runs forever)", () => {
  for (const src of [
    "long f(long s) { long n = 0; for (long j = 0; j < 10; j += s) n++; return n; }\nf(0)",
    "long f(int s) { long n = 0; for (int i = 0; i < 5; i++) for (long j = 0; j < 10; j += s) n++; return n; }\nf(0)",
  ])
    assert.match(fails(src, tiny).message, LIMIT, src);
  // Here s starts at 0 in the outer loop: no lower bound of 1.
  assert.match(
    fails("long n = 0; for (int s = 0; s < 3; s++) for (long j = 0; j < 10; j += s) n++; n", tiny)
      .message,
    LIMIT,
  );
});

test("j += i is unchecked only where the types prove it; otherwise it still traps", () => {
  // long j, int bound and step: j + i <= 2 * INT_MAX fits in long.
  assert.equal(
    text(
      "long n = 0; for (int i = 1; i < 4; i++) for (long j = 2147483000; j < 2147483647; j += i) n++; n",
    ),
    String(647 + 324 + 216),
  );
  // int j, int bound and step: j + i can pass INT_MAX, and traps at the '+='.
  const e = fails(
    "int n = 0;\nfor (int i = 1000; i < 1001; i++)\n  for (int j = 2147483000; j < 2147483647; j += i) n++;\nn",
  );
  assert.match(e.message, /result of '\+' does not fit in int/);
  assert.deepEqual([e.line, e.column], [3, 46]);
});
