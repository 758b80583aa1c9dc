// docs/api.md's examples are the files in examples/api/, shown verbatim, and each one runs and
// prints what its comments promise.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../../src/paths.js";

const dir = join(packageRoot, "examples", "api");
const files = readdirSync(dir).filter((f) => f.endsWith(".mjs"));

function runExample(file: string) {
  const r = spawnSync(process.execPath, [join(dir, file)], { cwd: packageRoot, encoding: "utf8" });
  assert.equal(r.status, 0, `${file}: ${r.stderr}`);
  return r;
}

test("docs/api.md shows every example file verbatim, and nothing else as code", () => {
  const doc = readFileSync(join(packageRoot, "docs", "api.md"), "utf8");
  const blocks = [...doc.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const shown = new Set<string>();
  for (const block of blocks) {
    if (block.split("\n").length <= 2) continue; // the one-line import
    const match = files.find((f) => readFileSync(join(dir, f), "utf8") === block);
    assert.ok(match, `a code block of docs/api.md is not an example file:\n${block}`);
    shown.add(match);
  }
  assert.deepEqual([...shown].sort(), [...files].sort());
});

test("run-code.mjs runs C, a C session, Lisp and CALC", () => {
  const lines = runExample("run-code.mjs").stdout.trim().split("\n");
  assert.deepEqual(lines, [
    "248171",
    "1 squared is 1",
    "2 squared is 4",
    "3 squared is 9",
    "error at 1:9: expected an expression but found ';'",
    "144",
    "265252859812191058636308480000000",
    "42",
  ]);
});

test("generate.mjs streams a generation with the region's injected result", () => {
  const r = runExample("generate.mjs");
  assert.match(r.stdout, /^Once upon a time \[C: 847\*293\] = VM\[248171\]/);
  assert.match(r.stdout, /\(max-tokens, 24 tokens, \d+ VM calls\)/);
  assert.match(r.stderr, /\[VM ran " 847\*293": ok\]/);
});

test("glass-box.mjs reads the top tokens and a hook that bans the first one changes the text", () => {
  const r = runExample("glass-box.mjs");
  const top = /most likely next tokens: (".*?")/.exec(r.stdout);
  assert.ok(top, r.stdout);
  const banned = top[1]!;
  const steered = new RegExp(
    `with ${banned.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} banned: Once upon a time(.*)`,
  ).exec(r.stdout);
  assert.ok(steered, r.stdout);
  assert.ok(!steered[1]!.startsWith(JSON.parse(banned) as string), steered[1]);
});
