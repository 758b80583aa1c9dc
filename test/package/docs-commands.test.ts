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

/**
 * Commands the docs show that this test does not run, and why: each pattern must match a command
 * the docs really show, so a reason cannot outlive its command.
 */
const NOT_RUN: Array<{ pattern: RegExp; why: string }> = [
  { pattern: /^npm ci && npx ruffian demo$/, why: "reinstalls node_modules (registry)" },
  { pattern: /^npm test$/, why: "the test suite itself" },
  {
    pattern: /^npm install ruffian$/,
    why: "downloads from the registry; test/package/pack.test.ts installs the packed tarball instead",
  },
  {
    pattern: /^npx ruffian eval --(table|compare|few-shot)\b/,
    why: "minutes of evaluation; test/eval runs the same code on small sets",
  },
  {
    pattern: /^npx ruffian serve\b/,
    why: "a server runs until stopped; test/server starts it and drives it over HTTP",
  },
  {
    pattern: /^curl .*http:\/\/127\.0\.0\.1:8080\//,
    why: "needs a running `ruffian serve`; test/server sends these requests",
  },
  { pattern: /^npx ruffian pull hf:/, why: "downloads a model (network)" },
];

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

/** A single quote left open (outside comments): the command goes on on the next line. */
function openQuote(text: string): boolean {
  let single = false;
  let double = false;
  let comment = false;
  let previous = "\n";
  for (const c of text) {
    if (comment) comment = c !== "\n";
    else if (c === "'" && !double) single = !single;
    else if (c === '"' && !single) double = !double;
    else if (c === "#" && !single && !double && /\s/.test(previous)) comment = true;
    previous = c;
  }
  return single;
}

/**
 * The commands of one block as a shell reads them: a line ending in a backslash, or inside an
 * open quote, continues on the next; variable assignments stay in force for later commands.
 */
function commandsOf(block: string): Array<{ line: string; setup: string[] }> {
  const out: Array<{ line: string; setup: string[] }> = [];
  const setup: string[] = [];
  let pending = "";
  for (const raw of block.split("\n")) {
    if (pending === "" && (raw.trim() === "" || raw.trim().startsWith("#"))) continue;
    pending = pending === "" ? raw : pending + "\n" + raw;
    if (pending.endsWith("\\") || openQuote(pending)) continue;
    const line = pending.replace(/\\\n\s*/g, "").trim();
    pending = "";
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(line)) setup.push(line);
    else out.push({ line, setup: [...setup] });
  }
  return out;
}

const commands = docs.flatMap((file) =>
  blocks(file, "(?:sh|bash)").flatMap((block) => commandsOf(block).map((c) => ({ file, ...c }))),
);

/** The command without its trailing comment. */
const bare = (line: string) => (line.includes("\n") ? line : line.replace(/\s+#.*$/, "")).trim();
const notRun = (command: string) => NOT_RUN.find((n) => n.pattern.test(command));

/** A directory whose entries are links to the repository's, so files the commands write stay here. */
const work = mkdtempSync(join(tmpdir(), "ruffian-docs-"));
after(() => rmSync(work, { recursive: true, force: true }));
for (const entry of readdirSync(packageRoot))
  if (entry !== ".git") symlinkSync(join(packageRoot, entry), join(work, entry));

const env = { ...process.env, npm_config_offline: "true", NO_COLOR: "1" };

test("the docs show shell commands, and every command left out exists and says why", () => {
  assert.ok(commands.length >= 10, `${commands.length} commands`);
  for (const { pattern, why } of NOT_RUN) {
    assert.ok(why.length > 0);
    assert.ok(
      commands.some((c) => pattern.test(bare(c.line))),
      `no command in the docs matches ${pattern}`,
    );
  }
});

test("every shell command of README.md and docs/*.md runs as written", () => {
  for (const { file, line, setup } of commands) {
    const command = bare(line);
    if (notRun(command)) continue;
    const expected = Number(/\(status (\d+)\)/.exec(line)?.[1] ?? 0);
    const r = spawnSync("bash", ["-o", "pipefail", "-c", [...setup, command].join("\n")], {
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
