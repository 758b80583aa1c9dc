// The messages between the HTTP thread (worker-host.ts) and the decode worker (decode-worker.ts).
import type { DecodeEvent } from "../decode/events.js";
import type { JobEnd, ModelFacts, RequestBody, StartedFacts, WireError } from "./decode-host.js";
import type { MetricDelta } from "./metric-relay.js";
import type { CancelReason } from "./scheduler.js";

export type ToWorker =
  | { t: "start"; id: number; request: RequestBody }
  | { t: "cancel"; id: number; reason: CancelReason; choice?: number }
  | { t: "tokenize"; id: number; content: string; addSpecial: boolean; withPieces: boolean }
  | { t: "detokenize"; id: number; tokens: number[] }
  | { t: "close" };

/** A job's end as it travels: an error loses its class (decode-host.ts's fromWire restores it). */
export type WireEnd = Exclude<JobEnd, { error: Error }> | { error: WireError };

/** The reply to an accepted start message (request id, the plan's facts). */
export type StartReply = [number, StartedFacts];

/**
 * One choice's event, its end (request id, choice index, event | null, end), or a run of its
 * sampled tokens that carry nothing the request asked for besides their text (no logprobs, no
 * `ruffian.tokens`): their text joined and how many they were. A token event is an object of
 * seven fields to clone here and rebuild on the HTTP thread; a run of them is one string.
 */
export type StepEntry =
  | [number, number, DecodeEvent]
  | [number, number, null, WireEnd]
  | [number, number, string, number];

export type FromWorker =
  | { t: "ready"; model: ModelFacts }
  | { t: "failed"; error: WireError }
  | { t: "reply"; id: number; ok: true; value: unknown }
  | { t: "reply"; id: number; ok: false; error: WireError }
  | {
      t: "step";
      busy: number;
      waiting: number;
      metrics: MetricDelta | undefined;
      /** Replies to start messages, handled before `out` (which may hold their events). */
      accepted: StartReply[];
      out: StepEntry[];
    }
  | { t: "closed" };
