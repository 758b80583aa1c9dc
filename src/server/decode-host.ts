// What the HTTP side needs from the thread that owns the engine: start a request (plan it,
// queue one job per choice) and get its decode events, cancel it, tokenize, and read the slots.
// Two hosts implement it: the engine on the HTTP thread (local-host.ts) and the engine on a
// worker thread (worker-host.ts, `--decode-thread worker`); the routes cannot tell them apart.
import type { DecodeEvent, DoneEvent } from "../decode/events.js";
import type { CancelReason } from "./scheduler.js";
import type { ChatCompletionBody, CompletionBody } from "./schemas.js";
import { ApiError } from "./errors.js";

/** Where the engine, the decode loop and the scheduler run (`--decode-thread`). */
export const DECODE_THREADS = ["worker", "main"] as const;
export type DecodeThread = (typeof DECODE_THREADS)[number];

/** What the model is, learned once it is loaded. */
export interface ModelFacts {
  path: string;
  description: string;
  nVocab: number;
  slots: number;
  /** KV cells per slot. */
  slotContext: number;
}

/** How a choice's job ended: its done event (and the prompt tokens reused), or an error. */
export type JobEnd =
  { done: DoneEvent; cancelled?: CancelReason; reused: number } | { error: Error };

/** Where a request's events go, per choice. A throw ends only that choice, with the error. */
export interface JobSink {
  /** Called once the request is planned, before any of its events. */
  begin(request: StartedRequest): void;
  event(choice: number, ev: DecodeEvent): void;
  /** Called exactly once per choice. */
  end(choice: number, outcome: JobEnd): void;
}

/** The HTTP side's sink (the route's): also takes sampled tokens in runs. */
export interface ResponseSink extends JobSink {
  /** Sampled tokens of a request that asked for nothing per token (no logprobs, no token
   * events), as their text joined: what `event` makes of their token events, in one call. The
   * decode worker sends them so (worker-protocol.ts); the engine on the HTTP thread calls
   * `event` per token. */
  tokens(choice: number, text: string, count: number): void;
}

/** What the HTTP side needs of a planned request. */
export interface StartedFacts {
  n: number;
  promptTokens: number;
  stops: readonly string[];
  /** Alternatives per token, -1 when logprobs were not asked for. */
  logprobs: number;
  stream: boolean;
  includeUsage: boolean;
  tokenEvents: boolean;
}

export interface StartedRequest extends StartedFacts {
  /** Stops every choice, or only `choice`; idempotent. */
  cancel(reason: CancelReason, choice?: number): void;
}

export type RequestBody =
  { endpoint: "chat"; body: ChatCompletionBody } | { endpoint: "text"; body: CompletionBody };

export interface DecodeHost {
  readonly model: ModelFacts;
  /** Slots generating right now. */
  readonly busy: number;
  /** Requests waiting for a slot. */
  readonly waiting: number;
  /** Plans and queues a request; rejects with an ApiError (400, 503 …) before any event. */
  start(request: RequestBody, sink: ResponseSink): Promise<StartedRequest>;
  tokenize(content: string, addSpecial: boolean, withPieces: boolean): Promise<TokenizeResult>;
  /** Rejects with a 400 naming a token outside the vocabulary. */
  detokenize(tokens: number[]): Promise<string>;
  close(): Promise<void>;
}

export type TokenizeResult =
  { tokens: number[] } | { tokens: Array<{ id: number; piece: string }> };

/** An error as it crosses threads (an ApiError keeps its status, code and headers). */
export interface WireError {
  message: string;
  api?: {
    status: number;
    type: ApiError["type"];
    param: string | null;
    code: string | null;
    headers: Record<string, string>;
  };
}

export function toWire(err: unknown): WireError {
  if (err instanceof ApiError)
    return {
      message: err.message,
      api: {
        status: err.status,
        type: err.type,
        param: err.param,
        code: err.code,
        headers: err.headers,
      },
    };
  return { message: err instanceof Error ? err.message : String(err) };
}

export function fromWire(w: WireError): Error {
  if (!w.api) return new Error(w.message);
  const a = w.api;
  return new ApiError(a.status, w.message, a.type, a.param, a.code, a.headers);
}
