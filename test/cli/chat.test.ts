// `ruffian chat` without a terminal: piped input, plain output (no escape codes), the hook
// console kept off stdout, VM commands, save/load, and clear errors for bad models and options.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { nanoModelPath, packageRoot, storiesModelPath } from "../../src/paths.js";
import { openEngine } from "../../src/engine/open.js";
import { DecodeLoop } from "../../src/decode/loop.js";
import { spawn } from "node:child_process";
import { ruffian, ruffianScript } from "./chat-helpers.js";

const tmp = mkdtempSync(join(tmpdir(), "ruffian-chat-"));
after(() => rmSync(tmp, { recursive: true, force: true }));

const chat = (input: string, ...args: string[]) =>
  ruffian(
    [
      "chat",
      "--no-tty",
      "--device",
      "cpu",
      "-n",
      "16",
      ...(args.includes("-m") ? [] : ["-m", storiesModelPath]),
      ...args,
    ],
    input,
  );

/** Greedy text the decode loop itself produces for a prompt (the chat must show exactly it). */
async function greedy(prompt: string, maxTokens: number, hook?: string): Promise<string> {
  const engine = await openEngine(storiesModelPath, { device: "cpu" });
  try {
    for await (const ev of new DecodeLoop(engine).run([{ prompt, maxTokens, hook }])) {
      if (ev.type === "done") return ev.text;
    }
    throw new Error("no done event");
  } finally {
    engine.dispose();
  }
}

const ESC = /\x1b/;

test("a piped chat prints each answer and VM result as plain text", async () => {
  const r = chat("Once upon a time\n/exec 6*7\n");
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stdout, ESC);
  assert.doesNotMatch(r.stderr, ESC);
  const lines = r.stdout.split("\n");
  assert.equal(lines[0], await greedy("Once upon a time", 16));
  assert.equal(lines[1], "VM[42]");
});

test("the second message continues the conversation, not a fresh prompt", async () => {
  const r = chat("Once upon a time\nThe dog\n");
  assert.equal(r.code, 0, r.stderr);
  const [first, second] = r.stdout.split("\n");
  assert.equal(second, await greedy(`Once upon a time${first}\nThe dog`, 16));
});

test("hook output goes to stderr, never into the answer; a rewind leaves a footnote", async () => {
  const hookFile = join(packageRoot, "examples", "hooks", "story-rewind.c");
  const r = chat(`/hook ${hookFile}\nOnce upon a time\n`);
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stdout, /step \d|entropy/);
  assert.match(r.stderr, /^\[hook\] watch @0 {2}step 0: entropy \d+\.\d{3} nats$/m);
  assert.match(r.stderr, /\[explored: "high entropy, try different approach" → rewound\]/);
  // The answer is the final timeline only: what the loop reports as its text.
  const expected = await greedy("Once upon a time", 16, readFileSync(hookFile, "utf8"));
  assert.match(r.stderr, /hook program story-rewind\.c loaded/);
  assert.ok(
    r.stdout.includes(expected),
    `${JSON.stringify(r.stdout)} lacks ${JSON.stringify(expected)}`,
  );
  assert.notEqual(expected, await greedy("Once upon a time", 16), "the rewind changed nothing");
});

test("a region the model writes is run and its result injected", () => {
  // ruffian-nano writes [C: …] regions by itself: no hook forces anything here.
  const question = "What is 4821 times 377?\n";
  const r = chat(question, "-m", nanoModelPath, "-n", "80");
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^ \[C: 4821\*377\] = VM\[1817517\]$/m);
  assert.match(r.stdout, /^The product is 1817517\.$/m);
  // With injection off the same region is written but nothing runs: no true result appears.
  const off = chat(question, "-m", nanoModelPath, "-n", "80", "--no-inject");
  assert.equal(off.code, 0, off.stderr);
  assert.match(off.stdout, /\[C: 4821\*377\]/);
  assert.doesNotMatch(off.stdout, /1817517/);
});

test("/save and /load keep the conversation and the VM session", () => {
  const file = join(tmp, "chat.json");
  const r = chat(
    [
      "/exec int counter = 5;",
      "/exec int twice(int x) { return 2 * x; }",
      "/exec memory[3] = 77;",
      "Once upon a time",
      `/save ${file}`,
      "/reset",
      "/exec counter",
      `/load ${file}`,
      "/exec twice(counter) + memory[3]",
    ].join("\n") + "\n",
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /VM\[error: .*counter/);
  assert.match(r.stdout, /^VM\[87\]$/m);
  const saved = JSON.parse(readFileSync(file, "utf8"));
  assert.equal(saved.format, "ruffian-chat/1");
  assert.deepEqual(
    saved.messages.map((m: { role: string }) => m.role),
    ["user", "assistant"],
  );
  assert.equal(saved.vm.memory[3], 77);
});

test("/load of a file that is not a saved chat says why", () => {
  const bad = join(tmp, "bad.json");
  writeFileSync(bad, JSON.stringify({ hello: 1 }));
  const r = chat(`/load ${bad}\n/load ${join(tmp, "missing.json")}\n`);
  assert.equal(r.code, 0);
  assert.match(r.stderr, /bad\.json is not a saved ruffian chat: format is undefined/);
  assert.match(r.stderr, /cannot read .*missing\.json/);
});

test("slash commands: /help, /stats, /model, /hooks and an unknown one", () => {
  const r = chat("/help\n/hooks\nOnce upon a time\n/stats\n/model\n/frob\n/quit\nnever sent\n");
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /\/exec CODE/);
  assert.match(r.stdout, /no hooks/);
  assert.match(r.stdout, /^turns {10}1$/m);
  assert.match(r.stdout, /^tokens {9}16 sampled/m);
  assert.match(r.stdout, /plain continuation/);
  assert.match(r.stdout, /stories260K\.gguf/);
  assert.match(r.stderr, /unknown command \/frob/);
  // /quit ends the chat: the last line is never answered.
  assert.equal(r.stdout.split("\n").filter((l) => l.startsWith(",")).length, 1);
});

test("/hooks shows the steps a hook has left", () => {
  const hook = join(tmp, "slow.c");
  writeFileSync(hook, `void slow(int step) { }\nint main() { hook_set("slow", 100); return 0; }\n`);
  const r = chat(`/hook ${hook}\n/hooks\nOnce upon a time\n/hooks\n`);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /waiting: .*slow\.c/);
  assert.match(r.stdout, /slow {2}84 steps left, called 16 times/);
});

test("a missing or broken model file is named, with exit code 1", () => {
  const missing = chat("", "-m", "/no/such/model.gguf");
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /model file not found: \/no\/such\/model\.gguf/);
  const fake = join(tmp, "fake.gguf");
  writeFileSync(fake, "this is not a model");
  const broken = chat("", "-m", fake);
  assert.equal(broken.code, 1);
  assert.match(broken.stderr, /not a GGUF model file: .*fake\.gguf/);
});

test("an hf: model that is not downloaded points to ruffian pull, without the network", () => {
  const r = ruffian(
    ["chat", "--no-tty", "-m", "hf:someone/some-model/model.Q4_K_M.gguf", "--models-dir", tmp],
    "",
  );
  assert.equal(r.code, 1);
  assert.match(r.stderr, /hf:someone\/some-model\/model\.Q4_K_M\.gguf is not downloaded yet/);
});

test("bad options are refused before the model loads, with exit code 2", () => {
  const fewShot = chat("", "--few-shot", "many");
  assert.equal(fewShot.code, 2);
  assert.match(
    fewShot.stderr,
    /'--few-shot <n>' argument 'many' is invalid\. expected an integer ≥ 0/,
  );
  const device = chat("", "--device", "gpu9");
  assert.equal(device.code, 2);
  assert.match(device.stderr, /argument 'gpu9' is invalid\. Allowed choices are auto, cpu, cuda/);
  // A file that cannot be read is an I/O failure (1), still found before the model loads.
  const system = chat("", "--system", join(tmp, "nope.txt"));
  assert.equal(system.code, 1);
  assert.match(system.stderr, /--system: cannot read .*nope\.txt \(no such file\)/);
  assert.doesNotMatch(system.stderr, /loading|at .*\.js:/);
});

test("SIGINT stops a piped generation; the chat goes on with the next line", async () => {
  const hook = join(tmp, "started.c");
  writeFileSync(
    hook,
    `void started(int step) { printf("started"); }\nint main() { hook_set("started", 1); return 0; }\n`,
  );
  const child = spawn(
    process.execPath,
    [ruffianScript, "chat", "--no-tty", "--device", "cpu", "-n", "1500", "--hook", hook],
    { cwd: packageRoot },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
    // The hook's first call shows the generation is under way: interrupt it.
    if (/\[hook\] started @0/.test(stderr) && !child.killed) child.kill("SIGINT");
  });
  child.stdin.write("Once upon a time\n");
  const code = await new Promise<number | null>((resolve) => {
    child.on("exit", resolve);
    // Once the (stopped) answer is printed, the next line goes in.
    const check = setInterval(() => {
      if (stdout.includes("\n")) {
        clearInterval(check);
        child.stdin.end("/exec 40+2\n");
      }
    }, 20);
  });
  assert.equal(code, 0, stderr);
  assert.match(stderr, /^\(stopped\)$/m);
  const [answer, result] = stdout.split("\n");
  assert.ok(answer!.length > 0, "the partial answer is printed");
  assert.equal(result, "VM[42]");
});

test("with no --model, chat answers through ruffian-nano: a region, the injected result, the answer", () => {
  const r = ruffian(["chat", "--no-tty", "--device", "cpu"], "What is 4821 times 377?\n");
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /\[C: 4821\*377\] = VM\[1817517\]/);
  const lines = r.stdout.trim().split("\n");
  assert.match(lines[lines.length - 1]!, /\b1817517\b/);
});
