// Every command shown in README.md and docs/*.md runs as written: each line of their ```sh blocks
// runs in a directory that looks like this repository (its entries linked in), with npm kept
// offline, and exits with the status its comment names — "(status N)" — or 0. README's library
// snippet runs as a module. The few commands that cannot run here are listed with the reason.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { packageRoot } from "../../src/paths.js";

/** Commands the docs show that this test does not run, and why. */
const NOT_RUN: Record<string, string> = {
  "npm ci && npx ruffian demo": "reinstalls node_modules from the registry (network)",
  "npm test": "the test suite itself",
  "npm install ruffian":
    "downloads from the registry; test/package/pack.test.ts installs the packed tarball instead",
  "npx ruffian eval --table": "minutes of evaluation; test/eval runs the same code on a small set",
  "npx ruffian eval --table --set eval/nano-questions-seen-wording.jsonl":
    "minutes of evaluation; test/eval runs the same code on a small set",
};

const docs = [
  join(packageRoot, "README.md"),
  ...readdirSync(join(packageRoot, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => join(packageRoot, "docs", f)),
];

function blocks(file: string, lang: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(new RegExp("^```" + lang + "\\n([\\s\\S]*?)^```", "gm"))].map(
    (m) => m[1]!,
  );
}

const commands = docs.flatMap((file) =>
  blocks(file, "(?:sh|bash)").flatMap((block) =>
    block
      .split("\n")
      .filter((line) => line.trim() !== "" && !line.trim().startsWith("#"))
      .map((line) => ({ file, line })),
  ),
);

/** A directory whose entries are links to the repository's, so files the commands write stay here. */
const work = mkdtempSync(join(tmpdir(), "ruffian-docs-"));
after(() => rmSync(work, { recursive: true, force: true }));
for (const entry of readdirSync(packageRoot))
  if (entry !== ".git") symlinkSync(join(packageRoot, entry), join(work, entry));

const env = { ...process.env, npm_config_offline: "true", NO_COLOR: "1" };

test("the docs show shell commands, and every command left out exists and says why", () => {
  assert.ok(commands.length >= 10, `${commands.length} commands`);
  const shown = new Set(commands.map((c) => c.line.replace(/\s+#.*$/, "").trim()));
  for (const command of Object.keys(NOT_RUN))
    assert.ok(shown.has(command), `not in the docs: ${command}`);
});

test("every shell command of README.md and docs/*.md runs as written", () => {
  for (const { file, line } of commands) {
    const command = line.replace(/\s+#.*$/, "").trim();
    if (command in NOT_RUN) continue;
    const expected = Number(/\(status (\d+)\)/.exec(line)?.[1] ?? 0);
    const r = spawnSync("bash", ["-o", "pipefail", "-c", command], {
      cwd: work,
      env,
      encoding: "utf8",
      input: "",
    });
    assert.equal(r.status, expected, `${file}: ${command}\n${r.stderr}`);
    assert.doesNotMatch(r.stderr, /^\s+at .+[:(]/m, `${file}: ${command}: a stack trace`);
  }
});

test("README's library snippet runs as a module importing the package by name", () => {
  const [snippet] = blocks(join(packageRoot, "README.md"), "js");
  assert.ok(snippet);
  // Inside the package, `import "ruffian"` resolves to the package itself (self-reference).
  const file = join(packageRoot, "examples", `.readme-snippet-${process.pid}.mjs`);
  writeFileSync(file, snippet);
  try {
    const r = spawnSync(process.execPath, [file], { cwd: work, encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^248171\n, there was a little girl/);
  } finally {
    rmSync(file, { force: true });
  }
});
