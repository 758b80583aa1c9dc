// `ruffian serve` as a user starts it: a child process that prints its URL when it listens and
// again when ready, answers,
// and exits 0 on SIGTERM; bad options exit 2 without a stack trace.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import { packageRoot } from "../../src/paths.js";
import { spawnServe } from "./helpers.js";

const bin = join(packageRoot, "bin", "ruffian.js");

test("ruffian serve prints its URL, answers on loopback and stops on SIGTERM", async () => {
  const { child, url, stdout } = await spawnServe(["--port", "0", "--slots", "2"], { cwd: "/" });
  // It says where it listens before the model is in, then that it serves.
  assert.match(
    stdout,
    /^ruffian serve: listening on http:\/\/127\.0\.0\.1:\d+, loading .*ruffian-nano\.gguf …\nruffian serve: http:\/\/127\.0\.0\.1:\d+ · model ruffian-nano · 2 slots/,
  );
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "ruffian-nano",
      messages: [{ role: "user", content: "What is 4821 times 377?" }],
      temperature: 0,
    }),
  });
  const body = (await res.json()) as { choices: Array<{ message: { content: string } }> };
  assert.match(body.choices[0]!.message.content, /1817517/);
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  child.kill("SIGTERM");
  assert.equal(await exited, 0);
});

test("bad serve options exit 2 with a message naming the option", () => {
  for (const [args, pattern] of [
    [["--slots", "0"], /--slots <n>' argument '0' is invalid. expected an integer from 1 to 256/],
    [["--port", "http"], /--port <port>' argument 'http' is invalid. expected an integer/],
    [["--profile", "giant"], /--profile <name>' argument 'giant' is invalid. Allowed choices are/],
    [["--api-key", "a", "--api-key-file", "b"], /either --api-key or --api-key-file/],
  ] as const) {
    const r = spawnSync(process.execPath, [bin, "serve", ...args], { encoding: "utf8" });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, pattern);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
  }
});

test("a missing model exits 1 naming the file", () => {
  const r = spawnSync(process.execPath, [bin, "serve", "--model", "/no/such.gguf", "--port", "0"], {
    encoding: "utf8",
  });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /model file not found: \/no\/such.gguf/);
});
