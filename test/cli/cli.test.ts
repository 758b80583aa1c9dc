// The `ruffian` command as a user runs it: a child process of bin/ruffian.js.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
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
