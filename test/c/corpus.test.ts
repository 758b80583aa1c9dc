// The C corpus: every program under test/fixtures/c/programs runs in the VM and must print what
// gcc printed (stored next to it); with gcc installed, the same test also re-runs gcc live.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../../src/paths.js";
import { runC } from "../../src/vm/index.js";
import type { VmOutcome } from "../../src/vm/result.js";
import { describeError } from "../../src/vm/result.js";
import { gccAvailable, runWithGcc } from "./gcc-oracle.js";

const fixtures = join(packageRoot, "test", "fixtures", "c");
const programsDir = join(fixtures, "programs");

interface Expected {
  stdout: string;
  exit: number;
}

/** Programs that do millions of operations or allocate megabytes get the biggest sandbox. */
const HEAVY = new Set([
  "045_pe007",
  "048_pe010_sieve_2m",
  "050_pe014_collatz_100k",
  "054_pe021_amicable",
  "057_pe030_digit_powers",
  "059_pe036_double_palindromes",
  "060_pe010_sieve_char_global",
  "160_pi_series",
  "173_long_accumulate",
]);

function runInVm(name: string, source: string): VmOutcome {
  return runC(source, { profile: HEAVY.has(name) ? "huge" : "large" });
}

function failureText(outcome: VmOutcome): string {
  if (outcome.ok) return "";
  const printed =
    outcome.stdout === ""
      ? ""
      : `; printed before failing: ${JSON.stringify(outcome.stdout.slice(0, 200))}`;
  return `${outcome.error.kind} error: ${describeError(outcome.error)}${printed}`;
}

/** main's return value as the process exit status would show it (0..255). */
function exitStatus(outcome: VmOutcome): number {
  if (!outcome.ok) return -1;
  const value = outcome.value.value;
  if (typeof value === "bigint") return Number(value & 255n);
  return typeof value === "number" ? Number(BigInt(Math.trunc(value)) & 255n) : 0;
}

const programNames = readdirSync(programsDir)
  .filter((f) => f.endsWith(".c"))
  .map((f) => f.slice(0, -2))
  .sort();

test("the corpus has at least 150 programs, each with an expected output", () => {
  assert.ok(programNames.length >= 150, `only ${programNames.length} programs`);
  const expectedFiles = new Set(
    readdirSync(programsDir).filter((f) => f.endsWith(".expected.json")),
  );
  const missing = programNames.filter((n) => !expectedFiles.has(`${n}.expected.json`));
  assert.deepEqual(missing, [], "run test/fixtures/c/regenerate.sh");
});

for (const name of programNames) {
  test(`corpus ${name}`, { timeout: 300_000 }, () => {
    const source = readFileSync(join(programsDir, `${name}.c`), "latin1");
    const expected = JSON.parse(
      readFileSync(join(programsDir, `${name}.expected.json`), "utf8"),
    ) as Expected;

    const outcome = runInVm(name, source);
    assert.ok(outcome.ok, failureText(outcome));
    assert.equal(outcome.stdout, expected.stdout, "VM stdout differs from gcc's recorded stdout");
    assert.equal(outcome.outputTruncated, false);
    if (expected.exit !== 0)
      assert.equal(exitStatus(outcome), expected.exit, "main's return value");
    if (expected.stdout === "") assert.equal(outcome.text, String(expected.exit));
    else assert.equal(outcome.text, expected.stdout);

    if (gccAvailable()) {
      const native = runWithGcc(source, name);
      assert.equal(native.stdout, expected.stdout, "gcc disagrees with the fixture: regenerate it");
      assert.equal(native.exit, expected.exit, "gcc's exit status disagrees with the fixture");
      assert.equal(outcome.stdout, native.stdout, "VM and live gcc differ");
    }
  });
}

interface Snippet {
  name: string;
  form: "expression" | "statements";
  definitions?: string;
  body: string;
}

const snippets = JSON.parse(
  readFileSync(join(fixtures, "snippets", "snippets.json"), "utf8"),
) as Snippet[];
const snippetResults = JSON.parse(
  readFileSync(join(fixtures, "snippets", "expected.json"), "utf8"),
) as Record<string, string>;

/** The source as a model would write it inside `[C: …]`: definitions, then statements. */
function snippetSource(s: Snippet): string {
  return s.form === "expression" ? s.body : `${s.definitions ?? ""} ${s.body}`.trim();
}

for (const snippet of snippets) {
  test(`snippet ${snippet.form} ${snippet.name}`, () => {
    const expected = snippetResults[snippet.name];
    assert.equal(typeof expected, "string", "run test/fixtures/c/regenerate.sh");
    const outcome = runC(snippetSource(snippet), { profile: "small" });
    assert.ok(outcome.ok, failureText(outcome));
    assert.equal(outcome.text, expected);
  });
}
