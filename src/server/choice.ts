// One choice of a completion as the decode loop's events build it: the visible text, Ruffian's
// extension (regions with their results, hook console, rewinds), per-token logprobs, and, for
// streaming, the deltas that are safe to send (text that could still turn into a stop string is
// held back until it cannot).
import type { DecodeEvent, DoneEvent, TokenEvent } from "../decode/events.js";
import { describeError } from "../vm/result.js";
import type { CancelReason } from "./scheduler.js";

export interface RegionReport {
  language: string;
  source: string;
  result?: string;
  error?: string;
  compileMs: number;
  runMs: number;
}

/** Events a stream chunk may carry in its `ruffian.events` field (docs/server.md). */
export type RuffianStreamEvent =
  | { type: "region-start"; language: string; offset: number }
  | ({ type: "region" } & RegionReport)
  | { type: "hook"; hook: string; step: number; seq: number; text: string }
  | { type: "hook-error"; hook: string; step: number; seq: number; message: string }
  | { type: "rewind"; checkpoint: number; erased: string; memo: string; position: number }
  | { type: "token"; step: number; id: number; text: string; logprob: number; entropy: number };

export interface TokenLogprob {
  id: number;
  text: string;
  logprob: number;
  top: Array<{ id: number; text: string; logprob: number }>;
}

export interface Delta {
  content: string;
  events: RuffianStreamEvent[];
  logprobs: TokenLogprob[];
}

export class Choice {
  /** Text generated so far as the events describe it (injections in, rewound text out). */
  private text = "";
  private sent = 0;
  readonly regions: RegionReport[] = [];
  readonly hookConsole: Array<{ hook: string; step: number; text: string }> = [];
  readonly rewinds: Array<{ checkpoint: number; erased: string; memo: string; position: number }> =
    [];
  readonly logprobs: TokenLogprob[] = [];
  /** Tokens sampled with text (what usage.completion_tokens counts): the end-of-generation
   * token is not one, as in OpenAI's usage, so the count equals the logprobs entries. */
  sampledTokens = 0;
  /** Log-probabilities not streamed yet, each with where its token's text ends in `text`: a
   * chunk carries those whose text it carries (text held back for a stop string waits). */
  private unsentLogprobs: Array<{ end: number; logprob: TokenLogprob }> = [];
  /** Set when a hook or the hook setup failed: the request ends with this error. */
  failure: string | undefined;
  done: DoneEvent | undefined;
  /** Why the server stopped this choice early, if it did. */
  cancelled: CancelReason | undefined;
  private pending: Delta = { content: "", events: [], logprobs: [] };

  constructor(
    readonly index: number,
    private readonly stops: readonly string[],
    private readonly wantLogprobs: boolean,
    private readonly tokenEvents: boolean,
  ) {}

  handle(ev: DecodeEvent): void {
    const out = this.pending;
    switch (ev.type) {
      case "token":
        this.addTokens(ev.text, 1);
        if (this.wantLogprobs) {
          const lp = tokenLogprob(ev);
          this.logprobs.push(lp);
          this.unsentLogprobs.push({ end: this.text.length, logprob: lp });
        }
        if (this.tokenEvents)
          out.events.push({
            type: "token",
            step: ev.step,
            id: ev.id,
            text: ev.text,
            logprob: Math.log(ev.probability),
            entropy: ev.entropy,
          });
        break;
      case "injection":
        this.text += ev.text;
        break;
      case "region-start":
        out.events.push({ type: "region-start", language: ev.language, offset: ev.offset });
        break;
      case "vm": {
        const o = ev.outcome;
        if (ev.origin === "region") {
          const report: RegionReport = {
            language: ev.language,
            source: ev.source,
            ...(o.ok ? { result: o.text } : { error: withGlassBoxHint(describeError(o.error)) }),
            compileMs: o.stats.compileMs,
            runMs: o.stats.runMs,
          };
          this.regions.push(report);
          out.events.push({ type: "region", ...report });
        } else if (ev.origin === "setup" && !o.ok) {
          this.failure = `the hook program failed: ${withGlassBoxHint(describeError(o.error))}`;
        }
        break;
      }
      case "hook-log":
        this.hookConsole.push({ hook: ev.hook, step: ev.step, text: ev.text });
        out.events.push({ type: "hook", hook: ev.hook, step: ev.step, seq: ev.seq, text: ev.text });
        break;
      case "hook-error":
        out.events.push({
          type: "hook-error",
          hook: ev.hook,
          step: ev.step,
          seq: ev.seq,
          message: ev.message,
        });
        // The loop's own fallback when VM code masked every token is not a hook failure.
        if (ev.hook !== "sampler")
          this.failure ??= `hook '${ev.hook}' failed at step ${ev.step}: ${withGlassBoxHint(ev.message)}`;
        break;
      case "rewind":
        this.text = this.text.slice(0, Math.max(0, this.text.length - ev.erased.length));
        this.sent = Math.min(this.sent, this.text.length);
        // Tokens whose text was erased before it was sent go out with the next chunk.
        for (const u of this.unsentLogprobs) u.end = Math.min(u.end, this.text.length);
        this.rewinds.push({
          checkpoint: ev.checkpoint,
          erased: ev.erased,
          memo: ev.memo,
          position: ev.position,
        });
        out.events.push({ type: "rewind", ...this.rewinds[this.rewinds.length - 1]! });
        break;
      case "done":
        this.done = ev;
        break;
    }
  }

  /** Sampled tokens' text and count: all a token event leaves when the request asked for no
   * logprobs and no token events (the decode worker then sends them as runs). */
  addTokens(text: string, count: number): void {
    this.text += text;
    this.sampledTokens += count;
  }

  /** Whether events wait to be streamed (a chunk should carry them now, not with later text). */
  get hasPendingEvents(): boolean {
    return this.pending.events.length > 0;
  }

  /** The final text: the loop's own (stop strings cut off), or what the events built. */
  get content(): string {
    return this.done?.text ?? this.text;
  }

  /** What may be streamed now; after `done`, everything that is left. */
  takeDelta(): Delta {
    const delta = this.pending;
    this.pending = { content: "", events: [], logprobs: [] };
    if (this.done) {
      const final = this.done.text;
      const sentText = this.text.slice(0, this.sent);
      delta.content = final.startsWith(sentText) ? final.slice(this.sent) : "";
      this.sent = final.length;
      delta.logprobs = this.unsentLogprobs.map((u) => u.logprob);
      this.unsentLogprobs = [];
    } else {
      const safe = this.text.length - this.heldBack();
      if (safe > this.sent) {
        delta.content = this.text.slice(this.sent, safe);
        this.sent = safe;
      }
      let k = 0;
      while (k < this.unsentLogprobs.length && this.unsentLogprobs[k]!.end <= this.sent) k++;
      delta.logprobs = this.unsentLogprobs.splice(0, k).map((u) => u.logprob);
    }
    return delta;
  }

  /** Characters at the end of the text that could be the start of a stop string. */
  private heldBack(): number {
    let hold = 0;
    for (const stop of this.stops) {
      for (let k = Math.min(stop.length - 1, this.text.length); k > hold; k--) {
        if (this.text.endsWith(stop.slice(0, k))) {
          hold = k;
          break;
        }
      }
    }
    return hold;
  }

  /** OpenAI's finish_reason for how the generation ended. */
  get finishReason(): "stop" | "length" {
    const r = this.done?.reason;
    return r === "max-tokens" || r === "context-full" || this.cancelled === "deadline"
      ? "length"
      : "stop";
  }

  /** How generation ended, in the loop's words, or "deadline" when the server stopped it. */
  get stopped(): string | undefined {
    return this.cancelled === "deadline" ? "deadline" : this.done?.reason;
  }
}

/** A read the engine cannot serve without recording activations says how to get them. */
function withGlassBoxHint(message: string): string {
  return /not available from this engine/.test(message)
    ? `${message} (start the server with --glass-box for activation reads)`
    : message;
}

function tokenLogprob(ev: TokenEvent): TokenLogprob {
  return {
    id: ev.id,
    text: ev.text,
    logprob: Math.log(ev.probability),
    top: (ev.top ?? []).map((t) => ({ id: t.id, text: t.text, logprob: Math.log(t.probability) })),
  };
}
