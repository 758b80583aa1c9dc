// One streamed chat completion and everything the page shows about it: the answer's pieces, the
// hook console, the plot points, regions, rewinds and how it ended. Panels subscribe to it; the
// chat and the experiments gallery both drive their requests through it.
import { request, messageOf, UnreachableError } from "./api.js";
import {
  updatesOf,
  type ChatChunk,
  type HookLine,
  type RegionOutcome,
  type StreamUpdate,
  type TokenInfo,
} from "./protocol.js";

export type { HookLine, RegionOutcome };
import { sseChunks } from "./stream.js";
import { erase, type Footnote, type Piece } from "./transcript.js";

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface ChatRequest {
  messages: ChatMessage[];
  maxTokens: number;
  temperature: number;
  /** C source sent as `ruffian.hook`: its main() runs before generation and may arm hooks. */
  hook?: string;
}

export type Phase = "streaming" | "done" | "stopped" | "failed";

/** How many alternatives the tooltip shows (and the request asks for). */
export const TOP_ALTERNATIVES = 5;

export class Generation {
  pieces: Piece[] = [];
  footnotes: Footnote[] = [];
  hookLines: HookLine[] = [];
  regions: RegionOutcome[] = [];
  /** Every sampled token, in order, rewound ones included: the plots' points. */
  tokens: TokenInfo[] = [];
  /** A rewind's erased text still being animated away, and how much of it is still shown. */
  erasing: { text: string; shown: number; at: number } | null = null;
  phase: Phase = "streaming";
  finishReason: string | null = null;
  error: string | null = null;
  unreachable = false;
  usage: { promptTokens: number; completionTokens: number } | null = null;
  readonly startedAt = performance.now();
  endedAt: number | null = null;

  private readonly controller = new AbortController();
  private listeners = new Set<() => void>();
  private waiting: Array<{ token: TokenInfo; step: number; expect: string }> = [];

  constructor(
    readonly model: string,
    readonly req: ChatRequest,
  ) {}

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }

  stop(): void {
    this.controller.abort();
  }

  async run(): Promise<void> {
    const body = {
      model: this.model,
      messages: this.req.messages,
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: this.req.maxTokens,
      temperature: this.req.temperature,
      logprobs: true,
      top_logprobs: TOP_ALTERNATIVES,
      ruffian: { tokens: true, ...(this.req.hook ? { hook: this.req.hook } : {}) },
    };
    try {
      const response = await request("/v1/chat/completions", {
        body,
        signal: this.controller.signal,
      });
      for await (const chunk of sseChunks<ChatChunk>(response)) {
        for (const update of updatesOf(chunk)) this.apply(update);
        this.changed();
      }
      this.phase = "done";
    } catch (error) {
      if (this.controller.signal.aborted) this.phase = "stopped";
      else {
        this.phase = "failed";
        this.unreachable = error instanceof UnreachableError || error instanceof TypeError;
        this.error = this.unreachable
          ? new UnreachableError("/v1/chat/completions").message
          : messageOf(error);
      }
    }
    this.endedAt = performance.now();
    this.changed();
  }

  private apply(update: StreamUpdate): void {
    switch (update.kind) {
      case "text":
        this.addText(update.text, update.tokens);
        break;
      case "hook":
        this.hookLines.push(update);
        break;
      case "region":
        this.regions.push(update);
        break;
      case "rewind":
        this.rewind({ memo: update.memo, erased: update.erased });
        break;
      case "usage":
        this.usage = update;
        break;
      case "finish":
        this.finishReason = update.reason;
        break;
    }
  }

  /** Text is matched to the sampled tokens in order; text that no token accounts for is what
   * the runtime injected (a region's result). A token's logprobs may come a chunk before its
   * text (the server holds text back while it could still become a stop string), so tokens
   * wait in a queue until their text arrives. */
  private addText(text: string, tokens: TokenInfo[] | null): void {
    for (const token of tokens ?? []) {
      this.waiting.push({ token, step: this.tokens.length, expect: token.text });
      this.tokens.push(token);
    }
    let rest = text;
    while (rest && this.waiting.length > 0) {
      const next = this.waiting[0]!;
      const at = next.expect ? rest.indexOf(next.expect) : 0;
      if (at < 0 && next.expect.startsWith(rest)) {
        // Only the start of the token's text came in this chunk.
        this.pieces.push({ text: rest, token: next.token, step: next.step });
        next.expect = next.expect.slice(rest.length);
        return;
      }
      this.waiting.shift();
      // A token whose text never arrives (cut at a region's end) keeps its plot point only.
      if (at < 0) continue;
      if (at > 0) this.pieces.push({ text: rest.slice(0, at), token: null, step: -1 });
      if (next.expect) this.pieces.push({ text: next.expect, token: next.token, step: next.step });
      rest = rest.slice(at + next.expect.length);
    }
    if (rest) this.pieces.push({ text: rest, token: null, step: -1 });
  }

  /** The answer loses the erased text at once; the page shows it going away backwards, 8 ms a
   * character, a long one within 1.5 s. A second rewind during the animation replaces it. */
  private rewind(note: Footnote): void {
    this.waiting = [];
    this.pieces = erase(this.pieces, note.erased);
    this.footnotes.push(note);
    const erasing = { text: note.erased, shown: note.erased.length, at: this.pieces.length };
    this.erasing = erasing;
    const perChar = Math.min(8, 1500 / Math.max(1, erasing.text.length));
    const start = performance.now();
    const tick = () => {
      if (this.erasing !== erasing) return;
      const gone = Math.floor((performance.now() - start) / perChar);
      erasing.shown = Math.max(0, erasing.text.length - gone);
      if (erasing.shown === 0) this.erasing = null;
      else requestAnimationFrame(tick);
      this.changed();
    };
    requestAnimationFrame(tick);
  }

  /** Skips a running rewind animation. */
  skipAnimation(): void {
    this.erasing = null;
    this.changed();
  }
}
