// The exit-code contract of every command (docs/cli.md): 0 success, 1 runtime failure, 2 usage
// error found before anything runs; a closed stdout ends quietly with 0; no stack traces.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Command } from "commander";
import { buildProgram } from "../../src/cli/main.js";
import { storiesModelPath } from "../../src/paths.js";
import { ruffian, ruffianScript } from "./chat-helpers.js";

const tmp = mkdtempSync(join(tmpdir(), "ruffian-exit-"));
after(() => rmSync(tmp, { recursive: true, force: true }));

/** Every command path the program defines, subcommands included ("steer train"). */
function commandPaths(command: Command, prefix: string[] = []): string[][] {
  return command.commands.flatMap((c) => [
    [...prefix, c.name()],
    ...commandPaths(c, [...prefix, c.name()]),
  ]);
}
const commands = commandPaths(buildProgram());
const noStackTrace = (stderr: string) => assert.doesNotMatch(stderr, /^\s+at .+[:(]/m, stderr);

test("an unknown option exits 2 for every command and is reported as exactly that", () => {
  assert.ok(commands.length >= 9, commands.join(", "));
  for (const command of commands) {
    const r = ruffian([...command, "--frobnicate"]);
    assert.equal(r.code, 2, `${command.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, /^error: unknown option '--frobnicate'/, command.join(" "));
    assert.equal(r.stdout, "", command.join(" "));
  }
  // A missing required option (run's -p, trace's --out) is not what gets reported.
  assert.doesNotMatch(ruffian(["run", "--frobnicate"]).stderr, /prompt/);
  assert.doesNotMatch(ruffian(["trace", "--frobnicate"]).stderr, /required/);
});

test("bad values and missing arguments exit 2 before anything runs", () => {
  const cases: Array<[string[], RegExp]> = [
    [["run", "-p", "x", "-n", "-5"], /'-n, --max-tokens <n>' argument '-5' is invalid/],
    [["chat", "-n", "-5"], /'-n, --max-tokens <n>' argument '-5' is invalid/],
    [["demo", "-n", "0"], /argument '0' is invalid\. expected an integer ≥ 1/],
    [["run", "-p", "x", "--temp", "hot"], /'--temp <t>' argument 'hot' is invalid/],
    [["run", "-p", "x", "--top-p", "1.5"], /expected a number from 0 to 1/],
    [["run", "-p", "x", "--device", "tpu"], /Allowed choices are auto, cpu, cuda, vulkan, metal/],
    [["run", "-p", "x", "--threads", "0"], /'--threads <n>' argument '0' is invalid/],
    [["demo", "--part", "dance"], /Allowed choices are entropy, vm, steer, rewind/],
    [["eval", "--limit", "x"], /'--limit <n>' argument 'x' is invalid/],
    [["serve", "--port", "http"], /'--port <port>' argument 'http' is invalid/],
    [["exec", "--lang", "cobol", "-e", "1"], /Allowed choices are c, lisp, calc/],
    [["exec", "a.c", "-e", "1"], /give either a file or -e, not both/],
    [["run"], /required option '-p, --prompt <text>' not specified/],
    [["trace", "-p", "x"], /required option '--out <file>' not specified/],
    [["pull"], /missing required argument 'uri'/],
    [["completion", "tcsh"], /Allowed choices are bash, zsh, fish/],
    [["frobnicate"], /unknown command 'frobnicate'/],
    [[], /Usage: ruffian/],
  ];
  for (const [args, message] of cases) {
    const r = ruffian(args);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, message, args.join(" "));
    assert.equal(r.stdout, "", args.join(" "));
    noStackTrace(r.stderr);
  }
});

test("--help and --version exit 0 on stdout", () => {
  for (const args of [["--help"], ["--version"], ["run", "--help"], ["completion", "--help"]]) {
    const r = ruffian(args);
    assert.equal(r.code, 0, args.join(" "));
    assert.notEqual(r.stdout, "");
  }
});

test("a closed stdout ends every streaming command quietly with status 0", () => {
  const prog = join(tmp, "loop.c");
  writeFileSync(
    prog,
    'int main() { for (int i = 0; i < 2000; i++) printf("line %d\\n", i); return 0; }\n',
  );
  const node = JSON.stringify(process.execPath);
  const bin = JSON.stringify(ruffianScript);
  const pipelines = [
    `${node} ${bin} run -p "Once upon a time" -n 200`,
    `${node} ${bin} demo -n 200`,
    `${node} ${bin} exec ${JSON.stringify(prog)}`,
    `yes "Once upon a time" | head -50 | ${node} ${bin} chat --no-tty -m ${JSON.stringify(storiesModelPath)} -n 64`,
  ];
  for (const pipeline of pipelines) {
    // bash reports the status of the command before `head` (PIPESTATUS counts from the left).
    const statusIndex = pipeline.startsWith("yes") ? 2 : 0;
    const r = spawnSync(
      "bash",
      [
        "-c",
        `${pipeline} | head -c 20 > /dev/null; echo "status=\${PIPESTATUS[${statusIndex}]}" >&2`,
      ],
      { encoding: "utf8" },
    );
    assert.equal(r.stderr, "status=0\n", pipeline);
  }
});

test("an unwritable output path fails with 1 before anything is generated", () => {
  const r = ruffian(["run", "-p", "hi", "--events", "/nonexistent-dir/e.jsonl"]);
  assert.equal(r.code, 1);
  assert.equal(
    r.stderr,
    "ruffian: --events: cannot write /nonexistent-dir/e.jsonl: no such file or directory\n",
  );
  assert.equal(r.stdout, "");
  const evalJson = ruffian(["eval", "--limit", "1", "--json", "/nonexistent-dir/r.json"]);
  assert.equal(evalJson.code, 1);
  assert.match(evalJson.stderr, /--json: cannot write \/nonexistent-dir\/r\.json/);
  assert.equal(evalJson.stdout, "");
});

test("a missing input file, model or hook fails with 1 and names it", () => {
  const hook = ruffian(["run", "-p", "hi", "--hook", join(tmp, "nope.c")]);
  assert.equal(hook.code, 1);
  assert.match(hook.stderr, /--hook: cannot read .*nope\.c: no such file or directory/);
  const model = ruffian(["run", "-p", "hi", "-m", join(tmp, "nope.gguf")]);
  assert.equal(model.code, 1);
  assert.match(model.stderr, /model file not found: .*nope\.gguf/);
  noStackTrace(model.stderr);
});

test("--device naming a backend that is not available fails with 1 and lists the available ones", () => {
  const available = spawnSync(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `import { availableDevices } from ${JSON.stringify(join(ruffianScript, "..", "..", "dist", "src", "engine", "llama", "library.js"))}; console.log((await availableDevices()).join(","));`,
    ],
    { encoding: "utf8" },
  )
    .stdout.trim()
    .split(",");
  const missing = ["cuda", "vulkan", "metal"].filter((d) => !available.includes(d));
  assert.ok(missing.length > 0, "every GPU backend is available here: nothing to test");
  for (const device of missing) {
    const r = ruffian(["run", "-p", "hi", "-n", "2", "--device", device]);
    assert.equal(r.code, 1, device);
    assert.match(
      r.stderr,
      new RegExp(`device "${device}" is not available .*; available here: ${available.join(", ")}`),
    );
    assert.equal(r.stdout, "");
  }
});

test("chat --hook that does not compile exits 1 naming the file; /hook reports it at once", () => {
  const bad = join(tmp, "bad.c");
  writeFileSync(bad, "int main() { int x = ; return 0; }\n");
  const flag = ruffian(["chat", "--no-tty", "-m", storiesModelPath, "--hook", bad], "hello\n");
  assert.equal(flag.code, 1);
  assert.equal(flag.stderr, `${bad}:1:22: expected an expression but found ';'\n`);
  assert.equal(flag.stdout, "");
  // In the chat, the error comes when the command is typed, before the next message's answer.
  const slash = ruffian(
    ["chat", "--no-tty", "-m", storiesModelPath, "-n", "4"],
    `/hook ${bad}\nOnce upon a time\n`,
  );
  assert.equal(slash.code, 0, slash.stderr);
  assert.match(slash.stderr, new RegExp(`${bad}:1:22: expected an expression`));
  assert.doesNotMatch(slash.stdout + slash.stderr, /loaded/);
});

test("chat --no-tty exits 1 when the prompt does not fit or the context fills up", () => {
  // stories260K holds 2,048 tokens; " word" is 3 of them.
  const words = (n: number) => Array(n).fill("word").join(" ") + "\n";
  const tooLong = ruffian(["chat", "--no-tty", "-m", storiesModelPath, "-n", "16"], words(3000));
  assert.equal(tooLong.code, 1);
  assert.match(tooLong.stderr, /the prompt has 9001 tokens but the context holds 2048/);
  const fills = ruffian(["chat", "--no-tty", "-m", storiesModelPath, "-n", "100"], words(675));
  assert.equal(fills.code, 1);
  assert.match(fills.stderr, /the context is full/);
  noStackTrace(tooLong.stderr + fills.stderr);
});

test("exec with no file and a terminal on stdin prints usage and exits 2", () => {
  // script(1) gives the command a pseudo-terminal as stdin.
  const r = spawnSync(
    "script",
    [
      "-qec",
      `${JSON.stringify(process.execPath)} ${JSON.stringify(ruffianScript)} exec`,
      "/dev/null",
    ],
    { encoding: "utf8", input: "" },
  );
  assert.equal(r.status, 2, r.stdout);
  assert.match(r.stdout, /no program given\r?\nusage: ruffian exec FILE/);
});
