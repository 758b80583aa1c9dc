// The `ruffian` command as a user runs it: a child process of bin/ruffian.js.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { packageRoot } from "../../src/paths.js";

const bin = join(packageRoot, "bin", "ruffian.js");

function ruffian(...args: string[]) {
  const r = spawnSync(process.execPath, [bin, ...args], { encoding: "utf8", cwd: "/" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test("--help lists every subcommand", () => {
  const r = ruffian("--help");
  assert.equal(r.code, 0);
  for (const cmd of ["demo", "run", "chat", "exec", "serve", "eval", "pull", "models"]) {
    assert.match(r.stdout, new RegExp(`^\\s+${cmd}\\b`, "m"), `missing ${cmd}`);
  }
});

test("each subcommand has its own --help", () => {
  for (const cmd of ["demo", "run", "chat", "exec", "serve", "eval", "pull", "models"]) {
    const r = ruffian(cmd, "--help");
    assert.equal(r.code, 0, cmd);
    assert.match(r.stdout, new RegExp(`Usage: ruffian ${cmd}`), cmd);
  }
});

test("demo runs from any directory and prints text with entropies", () => {
  const r = ruffian("demo", "--max-tokens", "12");
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /Once upon a time, there was a little girl/);
  assert.match(r.stdout, /entropy/);
  assert.match(r.stdout, /12 tokens in/);
});

test("an unknown subcommand fails with a non-zero exit", () => {
  const r = ruffian("frobnicate");
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /unknown command/);
});

test("demo with a missing model names the file and exits non-zero", () => {
  const r = ruffian("demo", "--model", "/no/such/file.gguf");
  assert.equal(r.code, 1);
  assert.match(r.stderr, /model file not found: \/no\/such\/file.gguf/);
});

test("run streams a region's injected result on stdout and the hook console on stderr", () => {
  const hook = join(packageRoot, "examples", "hooks", "write-c.c");
  const r = ruffian("run", "-p", "Once upon a time", "--hook", hook, "-n", "20");
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^Once upon a time \[C: 847\*293\] = VM\[248171\]/);
  assert.doesNotMatch(r.stdout, /\x1b\[/, "no escape codes when piped");
});

test("run keeps hook output out of the text and can write the event stream", () => {
  const dir = mkdtempSync(join(tmpdir(), "ruffian-run-"));
  try {
    const events = join(dir, "events.jsonl");
    const hook = join(packageRoot, "examples", "hooks", "top3.c");
    const r = ruffian(
      "run",
      "-p",
      "Once upon a time",
      "--hook",
      hook,
      "-n",
      "8",
      "--events",
      events,
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /\[hook show @0\] step 0 {2}H=\d+ mnat/);
    assert.doesNotMatch(r.stdout, /mnat/);
    const lines = readFileSync(events, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string });
    assert.equal(lines.filter((e) => e.type === "token").length, 8);
    assert.equal(lines.filter((e) => e.type === "hook-log").length, 6);
    assert.equal(lines.at(-1)!.type, "done");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("run with a hook that does not compile names the file and stops before generating", () => {
  const dir = mkdtempSync(join(tmpdir(), "ruffian-run-"));
  try {
    const hook = join(dir, "bad.c");
    writeFileSync(hook, "int main() {\n  return missing_function();\n}\n");
    const r = ruffian("run", "-p", "Once upon a time", "--hook", hook, "-n", "4");
    assert.equal(r.code, 1);
    assert.match(r.stderr, new RegExp(`^${hook}:2:\\d+: .*missing_function`, "m"));
    assert.equal(r.stdout, "", "nothing was generated");
    // A hook whose main() traps stops the same way, naming the file.
    writeFileSync(hook, "int main() {\n  int *p = 0;\n  return 10 / (p - p);\n}\n");
    const trap = ruffian("run", "-p", "Once upon a time", "--hook", hook, "-n", "4");
    assert.equal(trap.code, 1);
    assert.match(trap.stderr, new RegExp(`^${hook}:3:\\d+: .*division by zero`, "m"));
    assert.equal(trap.stdout, "");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("run rejects a bad option value with a message naming it", () => {
  const r = ruffian("run", "-p", "x", "--max-tokens", "zero");
  assert.equal(r.code, 2);
  assert.match(
    r.stderr,
    /'-n, --max-tokens <n>' argument 'zero' is invalid\. expected an integer ≥ 1/,
  );
});
