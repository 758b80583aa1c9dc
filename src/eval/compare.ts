// `ruffian eval --compare`: the same questions through (a) in-band regions, (b) the tool-calling
// protocol and (c) direct answers, one question at a time, with accuracy and what each answer
// cost: forward passes, tokens prefilled and decoded, wall time (medians and p95).
import { existsSync } from "node:fs";
import { isAbsolute, relative } from "node:path";
import type { Engine } from "../engine/types.js";
import { evaluate, type EvalQuestion } from "./nano-eval.js";
import { isCorrect } from "./grade.js";
import { runWithTools } from "./tool-protocol.js";
import { summarizeCosts, type AnswerCost, type CostSummary } from "./cost.js";
import { barPanels } from "./svg-chart.js";

export type CompareModeKind = "in-band" | "tools" | "direct";

export interface CompareMode {
  label: string;
  /** The mode's name under its bars in the plot. */
  short: string;
  kind: CompareModeKind;
  model: string;
  /** tools only: reuse the KV prefix after a tool message (false: re-read all, like a remote API). */
  reusePrefix?: boolean;
}

export interface ModeResult {
  mode: CompareMode;
  /** Why the mode did not run (its model is missing); the other fields are then empty. */
  missing?: string;
  total: number;
  correct: number;
  costs: AnswerCost[];
  summary?: CostSummary;
  answers: Array<{ question: string; text: string; correct: boolean }>;
}

export interface CompareOptions {
  maxTokens: number;
  open: (model: string) => Promise<Engine & { dispose(): void }>;
  onProgress?: (label: string, done: number, total: number) => void;
}

async function runMode(
  engine: Engine,
  mode: CompareMode,
  questions: readonly EvalQuestion[],
  options: CompareOptions,
): Promise<Omit<ModeResult, "mode">> {
  if (mode.kind === "tools") {
    const answers = [];
    const costs = [];
    for (const q of questions) {
      const run = await runWithTools(engine, q.question, {
        reusePrefix: mode.reusePrefix ?? true,
        maxTokens: options.maxTokens,
      });
      answers.push({ question: q.question, text: run.answer, correct: isCorrect(q, run.answer) });
      costs.push(run.cost);
      options.onProgress?.(mode.label, answers.length, questions.length);
    }
    return finish(answers, costs);
  }
  const report = await evaluate(engine, questions, {
    inject: true,
    parallel: 1,
    maxTokens: options.maxTokens,
    onProgress: (done, total) => options.onProgress?.(mode.label, done, total),
  });
  return finish(
    report.answers.map((a) => ({
      question: a.question.question,
      text: a.text,
      correct: a.correct,
    })),
    report.answers.map((a) => a.cost!),
  );
}

function finish(answers: ModeResult["answers"], costs: AnswerCost[]): Omit<ModeResult, "mode"> {
  return {
    total: answers.length,
    correct: answers.filter((a) => a.correct).length,
    costs,
    summary: summarizeCosts(costs),
    answers,
  };
}

/** A path as the user would type it: relative to the working directory when inside it. */
function shownPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : path;
}

/** Runs every mode whose model exists; a missing model is reported, never substituted. */
export async function compareModes(
  modes: readonly CompareMode[],
  questions: readonly EvalQuestion[],
  options: CompareOptions,
): Promise<ModeResult[]> {
  const results: ModeResult[] = [];
  for (const mode of modes) {
    if (!existsSync(mode.model)) {
      results.push({
        mode,
        missing: `model missing: ${shownPath(mode.model)}`,
        total: 0,
        correct: 0,
        costs: [],
        answers: [],
      });
      continue;
    }
    const engine = await options.open(mode.model);
    try {
      results.push({ mode, ...(await runMode(engine, mode, questions, options)) });
    } finally {
      engine.dispose();
    }
  }
  return results;
}

const pair = (s: CostSummary | undefined, f: (c: AnswerCost) => number, digits = 0) =>
  s ? `${f(s.median).toFixed(digits)} / ${f(s.p95).toFixed(digits)}` : "-";

/** The Markdown table: one row per mode; cost columns are "median / p95" per answer. */
export function compareTable(results: readonly ModeResult[]): string {
  const rows = results.map((r) =>
    r.missing
      ? `| ${r.mode.label} | ${r.missing} | - | - | - | - | - | - |`
      : `| ${r.mode.label} | ${r.mode.model.split("/").pop()} | ${r.total} | ${((100 * r.correct) / (r.total || 1)).toFixed(1)}% | ${pair(r.summary, (c) => c.forwardPasses)} | ${pair(r.summary, (c) => c.tokensPrefilled)} | ${pair(r.summary, (c) => c.tokensDecoded)} | ${pair(r.summary, (c) => c.ms, 1)} |`,
  );
  return (
    [
      "| mode | model | n | accuracy | forward passes | tokens prefilled | tokens decoded | ms per answer |",
      "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
      ...rows,
    ].join("\n") + "\n"
  );
}

/** Accuracy and the median costs side by side, one bar per mode ("n/a" for a missing model). */
export function comparePlot(results: readonly ModeResult[]): string {
  const bars = (f: (r: ModeResult) => number) =>
    results.map((r) => ({ label: r.mode.short, value: r.missing ? NaN : f(r) }));
  return barPanels({
    title: "in-band vs tool calls vs direct answers (medians per answer)",
    panels: [
      {
        title: "accuracy %",
        bars: bars((r) => (100 * r.correct) / (r.total || 1)),
        format: (v) => `${v.toFixed(1)}%`,
      },
      { title: "forward passes", bars: bars((r) => r.summary!.median.forwardPasses) },
      { title: "tokens prefilled", bars: bars((r) => r.summary!.median.tokensPrefilled) },
      { title: "ms per answer", bars: bars((r) => r.summary!.median.ms) },
    ],
  });
}
