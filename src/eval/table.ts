// Turns evaluation reports into the per-task comparison table of docs/nano.md: one column per run
// (with the VM, injection off, a baseline model), plus how often the first run wrote the exact region.
import type { EvalReport } from "./nano-eval.js";

export interface LabelledReport {
  label: string;
  report: EvalReport;
}

function percent(n: number, total: number): string {
  return total ? `${((100 * n) / total).toFixed(1)}%` : "-";
}

/** A Markdown table; the region-exact column is the first report's. Tasks keep the order in
 * which the first report met them. */
export function comparisonTable(runs: readonly LabelledReport[]): string {
  if (runs.length === 0) throw new Error("comparisonTable needs at least one report");
  const first = runs[0]!.report;
  const header = ["task", "n", ...runs.map((r) => r.label), `region exact (${runs[0]!.label})`];
  const rows = first.byTask.map((t) => [
    t.task,
    String(t.total),
    ...runs.map(({ report }) => {
      const s = report.byTask.find((x) => x.task === t.task);
      return s ? percent(s.correct, s.total) : "-";
    }),
    percent(t.codeExact, t.total),
  ]);
  const codeExact = first.byTask.reduce((sum, t) => sum + t.codeExact, 0);
  rows.push([
    "**all**",
    String(first.total),
    ...runs.map(({ report }) => `**${percent(report.correct, report.total)}**`),
    percent(codeExact, first.total),
  ]);
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  const align = ["---", "---:", ...runs.map(() => "---:"), "---:"];
  return [line(header), line(align), ...rows.map(line)].join("\n") + "\n";
}
