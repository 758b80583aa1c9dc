// Turns evaluation reports into the per-task comparison table of docs/nano.md: one column per run
// (with the VM, injection off, a baseline model), plus the first run's result-carrying and exact-region rates.
import type { EvalReport } from "./nano-eval.js";

export interface LabelledReport {
  label: string;
  report: EvalReport;
}

function percent(n: number, total: number): string {
  return total ? `${((100 * n) / total).toFixed(1)}%` : "-";
}

/** A Markdown table; the last two columns are the first report's: how often the final line
 * carried the result at all (correct or not in the rest), and how often the region was exact. Tasks keep the order in
 * which the first report met them. */
export function comparisonTable(runs: readonly LabelledReport[]): string {
  if (runs.length === 0) throw new Error("comparisonTable needs at least one report");
  const first = runs[0]!.report;
  const a = runs[0]!.label;
  const header = [
    "task",
    "n",
    ...runs.map((r) => r.label),
    `result in answer ${a}`,
    `region exact ${a}`,
  ];
  const rows = first.byTask.map((t) => [
    t.task,
    String(t.total),
    ...runs.map(({ report }) => {
      const s = report.byTask.find((x) => x.task === t.task);
      return s ? percent(s.correct, s.total) : "-";
    }),
    percent(t.resultInAnswer, t.total),
    percent(t.codeExact, t.total),
  ]);
  const resultInAnswer = first.byTask.reduce((sum, t) => sum + t.resultInAnswer, 0);
  const codeExact = first.byTask.reduce((sum, t) => sum + t.codeExact, 0);
  rows.push([
    "**all**",
    String(first.total),
    ...runs.map(({ report }) => `**${percent(report.correct, report.total)}**`),
    percent(resultInAnswer, first.total),
    percent(codeExact, first.total),
  ]);
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  const align = ["---", "---:", ...runs.map(() => "---:"), "---:", "---:"];
  return [line(header), line(align), ...rows.map(line)].join("\n") + "\n";
}
