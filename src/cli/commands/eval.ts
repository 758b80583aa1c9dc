// `ruffian eval`: runs a question set through the in-band runtime and prints accuracy per task, or
// (--table) the with-VM / injection-off / direct-baseline comparison as a Markdown table.
import { closeSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { openOutputFile } from "../files.js";
import { join } from "node:path";
import cliProgress from "cli-progress";
import { openEngine } from "../../engine/open.js";
import { evaluate, type EvalQuestion, type EvalReport } from "../../eval/nano-eval.js";
import { comparisonTable } from "../../eval/table.js";
import { nanoDirectModelPath, nanoModelPath, packageRoot } from "../../paths.js";

export interface EvalCommandOptions {
  model?: string;
  set?: string;
  limit?: number;
  parallel: number;
  maxTokens: number;
  inject?: boolean;
  json?: string;
  table?: boolean;
  baseline?: string;
}

export const DEFAULT_EVAL_SET = join(packageRoot, "eval", "nano-questions.jsonl");

export function readQuestions(path: string): EvalQuestion[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim().length > 0)
    .map((line, i) => {
      const q = JSON.parse(line) as Partial<EvalQuestion>;
      if (
        typeof q.question !== "string" ||
        typeof q.result !== "string" ||
        typeof q.task !== "string"
      ) {
        throw new Error(
          `${path}:${i + 1}: each line needs "task", "question" and "result" strings`,
        );
      }
      return { task: q.task, question: q.question, result: q.result, code: q.code };
    });
}

interface RunSpec {
  label: string;
  model: string;
  inject: boolean;
}

/** One evaluation run: opens the model, runs the questions, closes it. */
async function runOnce(
  spec: RunSpec,
  questions: readonly EvalQuestion[],
  parallel: number,
  maxTokens: number,
): Promise<EvalReport> {
  const engine = await openEngine(spec.model, {
    sequences: parallel,
    contextSize: 512 * parallel,
    glassBox: false,
  });
  try {
    const bar = process.stderr.isTTY
      ? new cliProgress.SingleBar(
          { format: `${spec.label} [{bar}] {value}/{total}` },
          cliProgress.Presets.shades_classic,
        )
      : undefined;
    bar?.start(questions.length, 0);
    const report = await evaluate(engine, questions, {
      inject: spec.inject,
      parallel,
      maxTokens,
      onProgress: (n) => bar?.update(n),
    });
    bar?.stop();
    return report;
  } finally {
    engine.dispose();
  }
}

const pct = (a: number, b: number) => (b ? ((100 * a) / b).toFixed(1) : "-");

function printReport(report: EvalReport, inject: boolean): void {
  process.stdout.write(`task            n   correct   code exact\n`);
  for (const t of report.byTask) {
    process.stdout.write(
      `${t.task.padEnd(14)} ${String(t.total).padStart(3)}   ${pct(t.correct, t.total).padStart(6)}%   ${pct(t.codeExact, t.total).padStart(6)}%\n`,
    );
  }
  process.stdout.write(
    `all            ${String(report.total).padStart(3)}   ${pct(report.correct, report.total).padStart(6)}%   (${report.seconds.toFixed(1)} s, injection ${inject ? "on" : "off"})\n`,
  );
}

export async function evalCommand(opts: EvalCommandOptions): Promise<number> {
  const { parallel, maxTokens } = opts;
  if (opts.json !== undefined) closeSync(openOutputFile("--json", opts.json));
  let questions = readQuestions(opts.set ?? DEFAULT_EVAL_SET);
  if (opts.limit !== undefined) questions = questions.slice(0, opts.limit);
  const model = opts.model ?? nanoModelPath;
  if (!opts.table) {
    const inject = opts.inject !== false;
    const report = await runOnce({ label: "eval", model, inject }, questions, parallel, maxTokens);
    printReport(report, inject);
    if (opts.json) writeFileSync(opts.json, JSON.stringify(report, null, 1));
    return 0;
  }
  // The comparison of docs/nano.md: (a) with the VM, (b) injection off, (c) a baseline model.
  const baseline = opts.baseline ?? nanoDirectModelPath;
  if (!existsSync(baseline)) throw new Error(`baseline model not found: ${baseline}`);
  const specs: RunSpec[] = [
    { label: "(a) with the VM", model, inject: true },
    { label: "(b) injection off", model, inject: false },
    { label: "(c) direct-answer model", model: baseline, inject: true },
  ];
  const runs = [];
  for (const spec of specs) {
    runs.push({ label: spec.label, report: await runOnce(spec, questions, parallel, maxTokens) });
  }
  process.stdout.write(comparisonTable(runs));
  if (opts.json) writeFileSync(opts.json, JSON.stringify(runs, null, 1));
  return 0;
}
