// `ruffian eval`: runs a question set through the in-band runtime and prints accuracy per task, or
// (--table) the with-VM / injection-off / direct-baseline comparison as a Markdown table;
// --few-shot sweeps the number of worked examples on any model; --compare runs in-band, tool
// calls and direct answers side by side with their cost per answer.
import { closeSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { openOutputFile } from "../files.js";
import { ReportedFailure, UsageError } from "../errors.js";
import { basename, join } from "node:path";
import cliProgress from "cli-progress";
import { openEngine } from "../../engine/open.js";
import { evaluate, type EvalQuestion, type EvalReport } from "../../eval/nano-eval.js";
import { comparisonTable } from "../../eval/table.js";
import {
  nanoDirectModelPath,
  nanoModelPath,
  nanoToolsModelPath,
  packageRoot,
} from "../../paths.js";
import {
  fewShotPrompt,
  fewShotTable,
  longestPrompts,
  parseShotCounts,
  promptFilePrompt,
  runFewShot,
  type ShotRender,
} from "../../eval/few-shot.js";
import { checkShotCounts, readPromptFile, type PromptFile } from "../../eval/prompt-file.js";
import { lineChart } from "../../eval/svg-chart.js";
import { compareModes, comparePlot, compareTable, type CompareMode } from "../../eval/compare.js";

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
  questions?: string;
  fewShot?: string;
  promptFile?: string;
  plot?: string;
  compare?: boolean;
  toolsModel?: string;
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

/** Progress on stderr: a counter rewritten in place on a terminal; otherwise a line every 5%
 * (logs stay short). */
function progress(label: string, done: number, total: number): void {
  if (process.stderr.isTTY) {
    process.stderr.write(`\r${label}: ${done}/${total}  ${done === total ? "\n" : ""}`);
  } else if (done === total || done % Math.max(1, Math.floor(total / 20)) === 0) {
    process.stderr.write(`${label}: ${done}/${total}\n`);
  }
}

/** KV cells a sequence gets when nothing says more is needed. */
const FEW_SHOT_CELLS = 4096;

/** The note printed under results of a random-weight model (general.name "random-…"). */
export function machineryNote(name: string): string {
  return (
    `note: ${name} has random weights: these rates measure the machinery (prompt file, ` +
    "tokenizer, decode loop, VM, grading), not a model.\n"
  );
}

async function fewShotCommand(
  opts: EvalCommandOptions,
  shots: readonly number[],
  model: string,
  questions: readonly EvalQuestion[],
  parallel: number,
  maxTokens: number,
  file: PromptFile | undefined,
): Promise<number> {
  const open = (cells: (train: number) => number) =>
    openEngine(model, {
      sequences: parallel,
      contextSize: (train) => cells(train) * parallel,
      glassBox: false,
    });
  let engine = await open((train) => Math.min(train > 0 ? train : FEW_SHOT_CELLS, FEW_SHOT_CELLS));
  try {
    const renderOf =
      (e: typeof engine): ShotRender =>
      (k, question) =>
        file ? promptFilePrompt(e, file, k, question) : fewShotPrompt(e, k, question);
    // Every prompt, with its answer's token budget, must fit the context the model was trained
    // with: a longer one would run past it (or be cut off) and measure nothing.
    const train = engine.model.trainContextSize;
    const context = train > 0 ? train : FEW_SHOT_CELLS;
    const longest = longestPrompts(engine, questions, shots, renderOf(engine));
    const tooLong = longest.filter((p) => p.tokens + maxTokens > context);
    if (tooLong.length > 0) {
      const worst = tooLong.reduce((a, b) => (b.tokens > a.tokens ? b : a));
      throw new ReportedFailure(
        `ruffian: the few-shot prompt${file ? ` of ${file.path}` : ""} does not fit the model's context: ` +
          tooLong
            .map(
              (p) =>
                `${p.shots} example${p.shots === 1 ? "" : "s"} take${p.shots === 1 ? "s" : ""} ${p.tokens} tokens`,
            )
            .join(", ") +
          ` (longest question: ${JSON.stringify(worst.question)}); with ${maxTokens} answer tokens (-n) ` +
          `that needs ${worst.tokens + maxTokens}, but the context of ${basename(model)} is ${context} tokens. ` +
          "Ask for fewer examples, a smaller -n, or a model with a longer context.",
      );
    }
    const need = Math.max(0, ...longest.map((p) => p.tokens)) + maxTokens;
    if (need * parallel > engine.capabilities.contextSize) {
      engine.dispose();
      engine = await open(() => need);
    }
    const scores = await runFewShot(engine, questions, shots, {
      parallel,
      maxTokens,
      onProgress: (k, done, total) => progress(`${k} examples`, done, total),
      render: renderOf(engine),
    });
    process.stdout.write(fewShotTable(scores));
    const name = engine.metadata("general.name") ?? "";
    if (name.startsWith("random-")) process.stdout.write(`\n${machineryNote(name)}`);
    const pct = (n: number, total: number) => (total ? (100 * n) / total : 0);
    const plot = opts.plot ?? "few-shot.svg";
    writeFileSync(
      plot,
      lineChart({
        title:
          `few-shot success: ${basename(model)}, ${questions.length} questions` +
          (file ? `, prompt ${basename(file.path)}` : ""),
        xLabel: "worked examples in the prompt",
        yLabel: "% of questions",
        yMax: 100,
        series: [
          {
            name: "region written",
            points: scores.map((s) => [s.shots, pct(s.wroteRegion, s.total)]),
          },
          { name: "compiled and ran", points: scores.map((s) => [s.shots, pct(s.ran, s.total)]) },
          { name: "answer right", points: scores.map((s) => [s.shots, pct(s.correct, s.total)]) },
        ],
      }),
    );
    process.stderr.write(`plot written to ${plot}\n`);
    if (opts.json) writeFileSync(opts.json, JSON.stringify(scores, null, 1));
    return 0;
  } finally {
    engine.dispose();
  }
}

async function compareCommand(
  opts: EvalCommandOptions,
  questions: readonly EvalQuestion[],
  maxTokens: number,
): Promise<number> {
  const tools = opts.toolsModel ?? nanoToolsModelPath;
  const modes: CompareMode[] = [
    { label: "(a) in-band", short: "in-band", kind: "in-band", model: opts.model ?? nanoModelPath },
    {
      label: "(b) tool calls, KV prefix reused",
      short: "tools, KV reuse",
      kind: "tools",
      model: tools,
      reusePrefix: true,
    },
    {
      label: "(b) tool calls, re-read (remote API)",
      short: "tools, re-read",
      kind: "tools",
      model: tools,
      reusePrefix: false,
    },
    {
      label: "(c) direct answers",
      short: "direct",
      kind: "direct",
      model: opts.baseline ?? nanoDirectModelPath,
    },
  ];
  const results = await compareModes(modes, questions, {
    maxTokens,
    open: (model) => openEngine(model, { sequences: 1, contextSize: 1024, glassBox: false }),
    onProgress: progress,
  });
  process.stdout.write(compareTable(results));
  for (const r of results) {
    if (r.missing) {
      process.stderr.write(
        `${r.mode.label}: ${r.missing} — not run; train it with training/run-tools.sh\n`,
      );
    }
  }
  const plot = opts.plot ?? "compare.svg";
  writeFileSync(plot, comparePlot(results));
  process.stderr.write(`plot written to ${plot}\n`);
  if (opts.json) writeFileSync(opts.json, JSON.stringify(results, null, 1));
  return 0;
}

/** Runs an option parser, reporting its complaint as a usage error (exit status 2). */
function usage<T>(parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

export async function evalCommand(opts: EvalCommandOptions): Promise<number> {
  const { parallel, maxTokens } = opts;
  if (opts.questions && opts.set) throw new UsageError("give --questions or --set, not both");
  if ([opts.fewShot !== undefined, opts.compare, opts.table].filter(Boolean).length > 1) {
    throw new UsageError("--few-shot, --compare and --table are separate runs: give one");
  }
  if (opts.promptFile !== undefined && opts.fewShot === undefined) {
    throw new UsageError("--prompt-file is the prompt of a --few-shot run: give --few-shot too");
  }
  const file =
    opts.promptFile !== undefined ? usage(() => readPromptFile(opts.promptFile!)) : undefined;
  const shots =
    opts.fewShot !== undefined
      ? usage(() => parseShotCounts(opts.fewShot!, file ? Infinity : undefined))
      : undefined;
  if (file && shots) usage(() => checkShotCounts(file, shots));
  if (opts.json !== undefined) closeSync(openOutputFile("--json", opts.json));
  if (opts.plot !== undefined) closeSync(openOutputFile("--plot", opts.plot));
  let questions = readQuestions(opts.questions ?? opts.set ?? DEFAULT_EVAL_SET);
  if (opts.limit !== undefined) questions = questions.slice(0, opts.limit);
  const model = opts.model ?? nanoModelPath;
  if (shots) return fewShotCommand(opts, shots, model, questions, parallel, maxTokens, file);
  if (opts.compare) return compareCommand(opts, questions, maxTokens);
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
