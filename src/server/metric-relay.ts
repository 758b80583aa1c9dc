// Metrics recorded on the decode worker and applied on the HTTP thread, whose prom-client
// registry /metrics reads. The worker records into a relay shaped like the metrics; each decode
// step message carries what changed, summed (a counter bumped per token travels as one number).
import { DECODE_METRIC_KINDS, type DecodeMetricName, type DecodeMetrics } from "./metrics.js";

type Labels = Record<string, string>;

/** What changed since the last message: counter sums, last gauge values, observations. */
export interface MetricDelta {
  inc: Array<[DecodeMetricName, number, Labels | undefined]>;
  set: Array<[DecodeMetricName, number]>;
  observe: Array<[DecodeMetricName, number]>;
}

export class MetricRelay {
  readonly metrics: DecodeMetrics;
  private incs = new Map<string, [DecodeMetricName, number, Labels | undefined]>();
  private sets = new Map<DecodeMetricName, number>();
  /** Each gauge's value as last relayed: setting it again to that is no change (the scheduler
   * sets its gauges at every step). */
  private relayed = new Map<DecodeMetricName, number>();
  private observed: Array<[DecodeMetricName, number]> = [];

  constructor() {
    const metrics: Record<string, unknown> = {};
    for (const [name, kind] of Object.entries(DECODE_METRIC_KINDS) as Array<
      [DecodeMetricName, string]
    >) {
      if (kind === "counter")
        metrics[name] = {
          inc: (a?: number | Labels, b?: number) => {
            const labels = typeof a === "object" ? a : undefined;
            const value = (typeof a === "number" ? a : b) ?? 1;
            const key = labels ? `${name}${JSON.stringify(labels)}` : name;
            const entry = this.incs.get(key);
            if (entry) entry[1] += value;
            else this.incs.set(key, [name, value, labels]);
          },
        };
      else if (kind === "gauge")
        metrics[name] = {
          set: (v: number) => {
            if (this.sets.has(name) || this.relayed.get(name) !== v) this.sets.set(name, v);
          },
        };
      else metrics[name] = { observe: (v: number) => this.observed.push([name, v]) };
    }
    this.metrics = metrics as DecodeMetrics;
  }

  /** What changed since the last call, or undefined when nothing did. */
  take(): MetricDelta | undefined {
    if (this.incs.size === 0 && this.sets.size === 0 && this.observed.length === 0)
      return undefined;
    const delta = { inc: [...this.incs.values()], set: [...this.sets], observe: this.observed };
    for (const [name, value] of this.sets) this.relayed.set(name, value);
    this.incs = new Map();
    this.sets = new Map();
    this.observed = [];
    return delta;
  }
}

/** Applies a relayed delta to the registry's metrics. */
export function applyMetricDelta(target: DecodeMetrics, delta: MetricDelta): void {
  for (const [name, value, labels] of delta.inc)
    (target[name] as DecodeMetrics["generatedTokens"]).inc(labels ?? value, labels && value);
  for (const [name, value] of delta.set) (target[name] as DecodeMetrics["slots"]).set(value);
  for (const [name, value] of delta.observe)
    (target[name] as DecodeMetrics["cancelSteps"]).observe(value);
}
