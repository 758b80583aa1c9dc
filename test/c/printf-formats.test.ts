// Differential test of printf formatting against gcc/glibc: random flags, widths, precisions and
// conversions applied to awkward doubles and integers. Skipped when gcc is not installed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { runC } from "../../src/vm/index.js";
import { describeError } from "../../src/vm/result.js";
import { seededRandom } from "./robustness-cases.js";
import { gccAvailable, runWithGcc } from "./gcc-oracle.js";

const DOUBLES = [
  "0.0",
  "-0.0",
  "1.0",
  "0.5",
  "1.5",
  "2.5",
  "0.125",
  "0.375",
  "2.675",
  "1.005",
  "9.995",
  "99.5",
  "999999.5",
  "0.1",
  "1e-5",
  "1.5e-7",
  "123456789.125",
  "1e15",
  "1e16",
  "1e21",
  "1e100",
  "1e-300",
  "5e-324",
  "1.7976931348623157e308",
  "3.141592653589793",
  "-2.718281828459045",
  "1.0/3",
  "2.0/3",
  "-7.0/9",
  "65536.0",
  "0.000123456789",
  "1e300*1e10",
  "-1e300*1e10",
];
const INTEGERS = ["0", "1", "-1", "42", "-42", "255", "65535", "2147483647", "(-2147483647 - 1)"];
const FLAG_SETS = ["", "-", "+", " ", "0", "#", "-+", "+0", "#0", "- "];

function format(random: () => number, conversions: string): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
  const conversion = pick(conversions.split(""));
  // glibc drops the zeros '#' must keep when %#g rounds up to a new power of ten (it prints
  // "1.e+02" for %#.2g of 99.5), so '#' is not combined with g/G here.
  const flags = /[gG]/.test(conversion) ? pick(FLAG_SETS).replace("#", "") : pick(FLAG_SETS);
  const width = random() < 0.5 ? "" : String(Math.floor(random() * 25));
  const precision = random() < 0.4 ? "" : `.${Math.floor(random() * 18)}`;
  return `%${flags}${width}${precision}${conversion}`;
}

function makeProgram(seed: number, lines: number): string {
  const random = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
  const body: string[] = [];
  for (let i = 0; i < lines; i++) {
    if (random() < 0.7)
      body.push(`    printf("[${format(random, "feEgG")}]\\n", ${pick(DOUBLES)});`);
    else body.push(`    printf("[${format(random, "dixXou")}]\\n", ${pick(INTEGERS)});`);
  }
  return `#include <stdio.h>\nint main() {\n${body.join("\n")}\n    return 0;\n}\n`;
}

for (let seed = 1; seed <= 8; seed++) {
  test(
    `printf formats match glibc, seed ${seed}`,
    { skip: !gccAvailable() && "gcc not found" },
    () => {
      const source = makeProgram(seed, 150);
      const outcome = runC(source, { profile: "small" });
      assert.ok(outcome.ok, outcome.ok ? "" : describeError(outcome.error));
      const want = runWithGcc(source).stdout.split("\n");
      const got = outcome.stdout.split("\n");
      const calls = source.split("\n").filter((l) => l.includes("printf"));
      for (let k = 0; k < want.length; k++) assert.equal(got[k], want[k], calls[k]?.trim());
    },
  );
}
