// Child process of the robustness run: executes a slice of the generated cases through runC and
// reports each one to the parent, which kills and restarts it if a case hangs or crashes it.
import { runC } from "../../src/vm/index.js";
import { robustnessCases } from "./robustness-cases.js";
import { outcomeProblem } from "./outcome-shape.js";
import { ROBUSTNESS_LIMITS, type ChildMessage } from "./robustness-protocol.js";

function send(message: ChildMessage): void {
  process.send?.(message);
}

const [seedArg, startArg] = process.argv.slice(2);
const cases = robustnessCases(Number(seedArg));

for (let index = Number(startArg); index < cases.length; index++) {
  const testCase = cases[index];
  if (!testCase) break;
  send({ type: "start", index });
  let status: string;
  let problem: string | null;
  const started = performance.now();
  try {
    const outcome = runC(testCase.source, { profile: "small", limits: ROBUSTNESS_LIMITS });
    problem = outcomeProblem(outcome);
    status = outcome.ok ? "ok" : outcome.error.kind;
  } catch (error) {
    status = "threw";
    problem = `threw ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`;
  }
  send({ type: "result", index, status, problem, ms: performance.now() - started });
}

// A normal program after thousands of hostile ones must still give the right answer.
const health = runC("int f(int n){int r=1;while(n>1){r=r*n;n=n-1;}return r;} return f(10);");
const report: ChildMessage = {
  type: "health",
  ok: health.ok && health.text === "3628800",
  detail: health.ok ? health.text : JSON.stringify(health.error),
};
// Disconnect only once the report is written: closing the channel cancels writes still queued
// on it, and the parent read the lost results as a crash of the case after the last it got.
if (process.send) process.send(report, () => process.disconnect());
