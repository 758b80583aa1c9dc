// Robustness run: thousands of generated, truncated and mutated C sources, each of which must end
// in a well-formed VmOutcome without throwing, hanging or crashing; the process stays healthy.
import { test } from "node:test";
import assert from "node:assert/strict";
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { runC } from "../../src/vm/index.js";
import { robustnessCases } from "./robustness-cases.js";
import { ROBUSTNESS_LIMITS, type ChildMessage } from "./robustness-protocol.js";

const SEED = 20261122;
/** A case that reports nothing for this long has hung the VM: its run is capped at 1 s, and its
 * compile, even for the 10k-deep and 20k-statement inputs, takes about a second on a busy machine. */
const HANG_MS = 20_000;
const childPath = fileURLToPath(new URL("./robustness-child.js", import.meta.url));

interface RunSummary {
  statuses: Map<string, number>;
  problems: string[];
  durations: { ms: number; label: string }[];
  healthy: boolean | undefined;
  healthDetail: string;
}

/** Runs cases from `start` in one child; resolves with the index to resume from (or -1 when done). */
function runChild(start: number, labels: string[], summary: RunSummary): Promise<number> {
  return new Promise((resolve) => {
    const child: ChildProcess = fork(childPath, [String(SEED), String(start)], {
      stdio: ["ignore", "ignore", "pipe", "ipc"],
      execArgv: [],
    });
    let current = start;
    let finished = false;
    let stderr = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-2000);
    });
    let watchdog = setTimeout(onHang, HANG_MS);
    function onHang(): void {
      summary.problems.push(`case ${current} (${labels[current]}): hung for ${HANG_MS} ms`);
      finished = true;
      child.kill("SIGKILL");
      resolve(current + 1);
    }
    child.on("message", (message: ChildMessage) => {
      clearTimeout(watchdog);
      watchdog = setTimeout(onHang, HANG_MS);
      if (message.type === "start") current = message.index;
      else if (message.type === "result") {
        summary.statuses.set(message.status, (summary.statuses.get(message.status) ?? 0) + 1);
        if (message.problem)
          summary.problems.push(
            `case ${message.index} (${labels[message.index]}): ${message.problem}`,
          );
        summary.durations.push({
          ms: message.ms,
          label: `${labels[message.index]}: ${message.status}`,
        });
        current = message.index + 1;
      } else {
        summary.healthy = message.ok;
        summary.healthDetail = message.detail;
      }
    });
    // "close", not "exit": "exit" can come before the last IPC messages (the final result and
    // the health report) have been delivered, which read as a crash at the end of the run.
    child.on("close", (code, signal) => {
      clearTimeout(watchdog);
      if (finished) return;
      finished = true;
      if (current >= labels.length && code === 0) return resolve(-1);
      summary.problems.push(
        `case ${current} (${labels[current]}): crashed the process (exit ${code}, signal ${signal}) ${stderr}`,
      );
      resolve(current + 1);
    });
  });
}

test(
  "thousands of hostile C sources each end in a well-formed VmOutcome",
  { timeout: 600_000 },
  async (t) => {
    const labels = robustnessCases(SEED).map((c) => c.label);
    assert.ok(labels.length >= 3000, `only ${labels.length} cases`);
    const summary: RunSummary = {
      statuses: new Map(),
      problems: [],
      durations: [],
      healthy: undefined,
      healthDetail: "",
    };
    const started = Date.now();
    let next = 0;
    while (next >= 0 && next < labels.length) next = await runChild(next, labels, summary);
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    const counts = [...summary.statuses].map(([k, v]) => `${k}=${v}`).join(" ");
    t.diagnostic(`${labels.length} cases in ${seconds} s (seed ${SEED}): ${counts}`);
    const slowest = summary.durations.sort((a, b) => b.ms - a.ms).slice(0, 5);
    t.diagnostic(`slowest: ${slowest.map((d) => `${d.label} ${d.ms.toFixed(0)} ms`).join("; ")}`);

    const completed = [...summary.statuses.values()].reduce((a, b) => a + b, 0);
    assert.deepEqual(summary.problems.slice(0, 25), [], `${summary.problems.length} problems`);
    assert.equal(completed, labels.length);
    assert.equal(summary.healthy, true, `child health check: ${summary.healthDetail}`);
  },
);

test("the VM still computes correctly in this process after hostile input", () => {
  const hostile = ["return f(;", "int main() { while (1); }", `return ${"(".repeat(10_000)}1;`];
  for (const source of hostile)
    runC(source, { profile: "small", limits: { maxInstructions: 10_000 } });
  const outcome = runC("847*293");
  assert.ok(outcome.ok);
  assert.equal(outcome.text, "248171");
});

/** Hostile inputs whose failure class is not a matter of taste: endless work hits a limit,
 * division by zero traps, and nothing reaches the host's files or shell. */
const EXPECTED_KINDS: Record<string, string[]> = {
  "while(1)": ["limit"],
  "for(;;) continue": ["limit"],
  "do while(1)": ["limit"],
  "busy loop with work": ["limit"],
  "64-bit count up": ["limit"],
  "infinite loop in expression form": ["limit"],
  "unbounded recursion": ["limit"],
  "recursion with big frames": ["limit"],
  "recursive main": ["limit"],
  "mutual recursion": ["limit"],
  "division by zero": ["runtime"],
  "modulo by zero": ["runtime"],
  "global int[1e9]": ["limit", "type"],
  "local int[1e9]": ["limit", "type", "runtime"],
  "#include /etc/passwd": ["syntax", "type"],
};

test("hostile extremes fail in the expected way and touch nothing outside the sandbox", () => {
  const extremes = new Map(robustnessCases(SEED).map((c) => [c.label, c.source]));
  for (const [label, kinds] of Object.entries(EXPECTED_KINDS)) {
    const source = extremes.get(label);
    assert.ok(source !== undefined, `no case labelled ${label}`);
    const outcome = runC(source, { profile: "small", limits: ROBUSTNESS_LIMITS });
    assert.equal(outcome.ok, false, `${label} should fail`);
    if (!outcome.ok)
      assert.ok(kinds.includes(outcome.error.kind), `${label}: ${outcome.error.kind}`);
  }
  const passwd = runC(extremes.get("#include /etc/passwd")!, { profile: "small" });
  assert.ok(!passwd.ok && !/root:/.test(passwd.error.message + passwd.stdout));
  const shell = runC(extremes.get("system()")!, { profile: "small" });
  assert.ok(!/pwned/.test(shell.stdout), "system() reached a shell");
  const file = runC(extremes.get("fopen")!, { profile: "small" });
  assert.ok(!file.ok || file.text === "0", "fopen opened a host file");
});
