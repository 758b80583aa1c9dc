// `ruffian exec` as a user runs it (a child process of bin/ruffian.js): -e, files, stdin, --json,
// --stats, error reporting and the exit-code contract.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { packageRoot } from "../../src/paths.js";

const bin = join(packageRoot, "bin", "ruffian.js");

function exec(
  args: {
    file?: string;
    expr?: string;
    lang?: string;
    profile?: string;
    stats?: boolean;
    json?: boolean;
  },
  input?: string,
) {
  const argv = ["exec"];
  if (args.file !== undefined) argv.push(args.file);
  if (args.expr !== undefined) argv.push("-e", args.expr);
  if (args.lang !== undefined) argv.push("--lang", args.lang);
  if (args.profile !== undefined) argv.push("--profile", args.profile);
  if (args.stats) argv.push("--stats");
  if (args.json) argv.push("--json");
  const r = spawnSync(process.execPath, [bin, ...argv], { input: input ?? "", encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test("-e prints the value of an expression", () => {
  const r = exec({ expr: "847*293" });
  assert.equal(r.code, 0);
  assert.equal(r.stdout, "248171\n");
});

test("a file runs and prints what the program printed", () => {
  const dir = mkdtempSync(join(tmpdir(), "ruffian-exec-"));
  const f = join(dir, "hello.c");
  writeFileSync(f, '#include <stdio.h>\nint main() { printf("hello %d\\n", 42); return 0; }\n');
  const r = exec({ file: f });
  assert.equal(r.code, 0);
  assert.equal(r.stdout, "hello 42\n");
});

test("- reads the program from standard input", () => {
  const r = exec({ file: "-" }, "int f(int n){return n<2?n:f(n-1)+f(n-2);} return f(20);");
  assert.equal(r.code, 0);
  assert.equal(r.stdout, "6765\n");
});

test("errors go to stderr as file:line:col: message with exit code 1", () => {
  const r = exec({ expr: "int x = 1;\nreturn x / 0;" });
  assert.equal(r.code, 1);
  assert.equal(r.stderr, "<expr>:2:10: division by zero\n");
  const s = exec({ file: "-" }, "int main() { return nope(); }");
  assert.equal(s.code, 1);
  assert.equal(s.stderr, "<stdin>:1:21: unknown function 'nope'\n");
  const missing = exec({ file: "/nonexistent/x.c" });
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /cannot read '\/nonexistent\/x.c'/);
});

test("--json prints the whole outcome, --stats prints statistics to stderr", () => {
  const j = exec({ expr: "return 142913828922;", json: true });
  assert.equal(j.code, 0);
  const parsed = JSON.parse(j.stdout) as { ok: boolean; value: { ctype: string; value: string } };
  assert.equal(parsed.ok, true);
  assert.deepEqual(parsed.value, { ctype: "long", value: "142913828922" });
  const s = exec({ expr: "1+1", stats: true });
  assert.equal(s.stdout, "2\n");
  assert.match(s.stderr, /compile [\d.]+ ms, run [\d.]+ ms, \d+ instructions/);
});

test("--profile is validated and applied", () => {
  const bad = exec({ expr: "1", profile: "enormous" });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /argument 'enormous' is invalid\. Allowed choices are tiny, small/);
  const tiny = exec({ expr: "while (1) {}", profile: "tiny" });
  assert.equal(tiny.code, 1);
  assert.match(
    tiny.stderr,
    /^<expr>:1:1: instruction limit exceeded \(1000000 instructions; raise/,
  );
});

test("other languages are loaded on demand; unknown ones are refused", () => {
  const r = exec({ expr: "1", lang: "cobol" });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /argument 'cobol' is invalid\. Allowed choices are c, lisp, calc/);
});
