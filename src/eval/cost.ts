// What one answer costs the engine — forward passes (llama_decode calls), tokens prefilled and
// decoded, wall time — and the medians and 95th percentiles the comparison reports.
import type { Engine } from "../engine/types.js";
import type { DoneEvent } from "../decode/events.js";

export interface AnswerCost {
  forwardPasses: number;
  /** Tokens evaluated that the model did not sample: prompts, injected results, tool messages,
   * and conversations re-read after a tool call. */
  tokensPrefilled: number;
  /** Tokens the model sampled (its end-of-generation token included). */
  tokensDecoded: number;
  ms: number;
}

export interface CostMark {
  engine: Engine;
  forwardPasses: number;
  tokensEvaluated: number;
  started: number;
}

/** Remembers the engine's counters before an answer starts. */
export function startCost(engine: Engine): CostMark {
  return {
    engine,
    forwardPasses: engine.counters?.forwardPasses ?? 0,
    tokensEvaluated: engine.counters?.tokensEvaluated ?? 0,
    started: performance.now(),
  };
}

/** The cost since `mark` of the generations that ended with `done` (one per generation of the
 * answer: a tool call and its continuation are two). A sampled token that ended its generation
 * (end of text, a stop string) is never evaluated, so only the others count against prefill. */
export function costSince(mark: CostMark, done: readonly DoneEvent[]): AnswerCost {
  const counters = mark.engine.counters;
  if (!counters) throw new Error("this engine does not count its forward passes");
  const sampled = done.reduce((n, d) => n + d.stats.sampledTokens, 0);
  const sampledEvaluated = done.reduce(
    (n, d) => n + d.stats.sampledTokens - (d.reason === "eos" || d.reason === "stop" ? 1 : 0),
    0,
  );
  const evaluated = counters.tokensEvaluated - mark.tokensEvaluated;
  return {
    forwardPasses: counters.forwardPasses - mark.forwardPasses,
    tokensPrefilled: Math.max(0, evaluated - sampledEvaluated),
    tokensDecoded: sampled,
    ms: performance.now() - mark.started,
  };
}

/** The q-quantile (0..1) of values by the nearest-rank method; NaN for none. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1]!;
}

export interface CostSummary {
  median: AnswerCost;
  p95: AnswerCost;
}

/** Medians and 95th percentiles of each cost field over answers. */
export function summarizeCosts(costs: readonly AnswerCost[]): CostSummary {
  const at = (q: number): AnswerCost => ({
    forwardPasses: quantile(
      costs.map((c) => c.forwardPasses),
      q,
    ),
    tokensPrefilled: quantile(
      costs.map((c) => c.tokensPrefilled),
      q,
    ),
    tokensDecoded: quantile(
      costs.map((c) => c.tokensDecoded),
      q,
    ),
    ms: quantile(
      costs.map((c) => c.ms),
      q,
    ),
  });
  return { median: at(0.5), p95: at(0.95) };
}
