// The server's Prometheus metrics (prom-client), one registry per server so tests and several
// servers in one process never share counters.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

export type ServerMetrics = ReturnType<typeof createMetrics>;

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "ruffian_process_" });
  const registers = [registry];
  return {
    registry,
    requests: new Counter({
      name: "ruffian_requests_total",
      help: "HTTP requests by endpoint and status code",
      labelNames: ["endpoint", "status"] as const,
      registers,
    }),
    promptTokens: new Counter({
      name: "ruffian_prompt_tokens_total",
      help: "prompt tokens evaluated (after prefix reuse)",
      registers,
    }),
    reusedTokens: new Counter({
      name: "ruffian_prompt_tokens_reused_total",
      help: "prompt tokens served from a slot's KV cache (prefix reuse)",
      registers,
    }),
    generatedTokens: new Counter({
      name: "ruffian_generated_tokens_total",
      help: "tokens sampled by the model",
      registers,
    }),
    injectedTokens: new Counter({
      name: "ruffian_injected_tokens_total",
      help: "tokens of VM results injected into the context",
      registers,
    }),
    vmRegions: new Counter({
      name: "ruffian_vm_regions_total",
      help: "code regions run, by language and outcome",
      labelNames: ["language", "outcome"] as const,
      registers,
    }),
    hookErrors: new Counter({
      name: "ruffian_hook_errors_total",
      help: "hook programs that failed (their request ends with the error)",
      registers,
    }),
    queueDepth: new Gauge({
      name: "ruffian_queue_depth",
      help: "requests waiting for a slot",
      registers,
    }),
    slotsBusy: new Gauge({
      name: "ruffian_slots_busy",
      help: "slots generating right now",
      registers,
    }),
    slots: new Gauge({ name: "ruffian_slots", help: "slots (sequences) of the engine", registers }),
    rejected: new Counter({
      name: "ruffian_requests_rejected_total",
      help: "requests answered 503 because the queue was full",
      registers,
    }),
    cancelled: new Counter({
      name: "ruffian_requests_cancelled_total",
      help: "generations stopped early, by reason (disconnect, deadline, error)",
      labelNames: ["reason"] as const,
      registers,
    }),
    cancelSteps: new Histogram({
      name: "ruffian_cancel_steps",
      help: "decode steps a cancelled sequence took after the cancel before its slot was freed",
      buckets: [0, 1, 2, 4, 8, 16],
      registers,
    }),
    cancelSeconds: new Histogram({
      name: "ruffian_cancel_seconds",
      help: "time from cancel (client disconnect, deadline) to slot freed",
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1],
      registers,
    }),
    timeToFirstToken: new Histogram({
      name: "ruffian_time_to_first_token_seconds",
      help: "time from request arrival to its first sampled token",
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
  };
}

type Labels = Record<string, string>;

/** The metrics the decode side records (scheduler, loop events), by kind: the one list the
 * decode worker's relay (metric-relay.ts) and the registry's type are checked against. */
export const DECODE_METRIC_KINDS = {
  promptTokens: "counter",
  reusedTokens: "counter",
  generatedTokens: "counter",
  injectedTokens: "counter",
  vmRegions: "counter",
  rejected: "counter",
  cancelled: "counter",
  queueDepth: "gauge",
  slotsBusy: "gauge",
  slots: "gauge",
  cancelSteps: "histogram",
  cancelSeconds: "histogram",
  timeToFirstToken: "histogram",
} as const;

export type DecodeMetricName = keyof typeof DECODE_METRIC_KINDS;

interface MetricShapes {
  counter: { inc(valueOrLabels?: number | Labels, value?: number): void };
  gauge: { set(value: number): void };
  histogram: { observe(value: number): void };
}

/** What the decode side needs of each metric: its method alone, so that a worker thread can
 * record into a relay that the HTTP thread applies to the prom-client registry. */
export type DecodeMetrics = {
  [K in DecodeMetricName]: MetricShapes[(typeof DECODE_METRIC_KINDS)[K]];
};
