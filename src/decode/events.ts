// The typed event stream of the decode loop: the one interface the CLI, the server and the web
// UI consume. Every event names its sequence, so several sequences can share one stream.
import type { VmOutcome } from "../vm/result.js";
import type { Region, RegionLanguage } from "./scanner.js";

export type DoneReason = "eos" | "max-tokens" | "stop" | "aborted" | "context-full" | "error";

export interface TokenEvent {
  type: "token";
  seq: number;
  /** 0-based index of the sampled token in this generation. */
  step: number;
  id: number;
  text: string;
  /** Probability of the chosen token under the distribution it was sampled from. */
  probability: number;
  /** Entropy of that distribution, in nats. */
  entropy: number;
  /** The most likely tokens of that distribution, best first (only when a request asks). */
  top?: Array<{ id: number; text: string; probability: number }>;
}

export interface RegionStartEvent {
  type: "region-start";
  seq: number;
  language: RegionLanguage;
  syntax: "bracket" | "fence";
  /** Offset in the sequence's generated text. */
  offset: number;
}

export interface RegionEndEvent {
  type: "region-end";
  seq: number;
  region: Region;
}

export interface VmEvent {
  type: "vm";
  seq: number;
  /** "region" for code the model wrote, "hook" for a hook call, "setup" for a --hook main(). */
  origin: "region" | "hook" | "setup";
  language: RegionLanguage;
  source: string;
  outcome: VmOutcome;
}

export interface InjectionEvent {
  type: "injection";
  seq: number;
  text: string;
  tokens: number[];
  /** Milliseconds spent evaluating the injected tokens into the KV cache. */
  decodeMs: number;
}

export interface HookLogEvent {
  type: "hook-log";
  seq: number;
  hook: string;
  step: number;
  text: string;
}

export interface HookErrorEvent {
  type: "hook-error";
  seq: number;
  hook: string;
  step: number;
  message: string;
}

export interface RewindEvent {
  type: "rewind";
  seq: number;
  checkpoint: number;
  /** The generated text that was erased, in order. */
  erased: string;
  memo: string;
  /** Token position the sequence went back to. */
  position: number;
}

export interface DoneEvent {
  type: "done";
  seq: number;
  reason: DoneReason;
  /** With reason "error": what failed (a long-lived loop ends only the sequence it concerns). */
  error?: string;
  /** The final generated text (injections included, rewound text excluded). */
  text: string;
  stats: GenerationStats;
}

export interface GenerationStats {
  promptTokens: number;
  sampledTokens: number;
  injectedTokens: number;
  vmCalls: number;
  hookCalls: number;
  rewinds: number;
  /** Wall time of the whole generation, ms. */
  totalMs: number;
  /** Sampled tokens per second over the generation. */
  tokensPerSecond: number;
}

export type DecodeEvent =
  | TokenEvent
  | RegionStartEvent
  | RegionEndEvent
  | VmEvent
  | InjectionEvent
  | HookLogEvent
  | HookErrorEvent
  | RewindEvent
  | DoneEvent;
