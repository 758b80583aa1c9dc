// How a chat is shown: TtyView streams into a live area with the hook console and a status line
// in a footer and animates rewinds; PlainView (pipes, --no-tty) prints each finished answer as
// plain text on stdout and the hook console on stderr, without escape codes.
import type { DecodeEvent, DoneEvent } from "../../decode/events.js";
import { describeError, type VmOutcome } from "../../vm/result.js";
import { valueText } from "../../vm/session.js";
import { LiveArea } from "./live-area.js";
import type { ChatSession } from "./session.js";
import { makeTone, type Tone } from "./tone.js";

export interface ChatView {
  readonly tone: Tone;
  turnStarted(session: ChatSession): void;
  event(ev: DecodeEvent, session: ChatSession): Promise<void>;
  turnEnded(done: DoneEvent, session: ChatSession): void;
  /** Skips a rewind animation in progress (a key was pressed). */
  skip(): void;
  /** Output of a command, on stdout. */
  info(text: string): void;
  /** An acknowledgement (hook loaded, chat saved …): dim on a terminal, stderr in a pipe. */
  note(text: string): void;
  /** A problem, on stderr. */
  error(text: string): void;
  /** The result of /exec. */
  vmOutcome(outcome: VmOutcome): void;
}

/** Milliseconds per erased character when a rewind is shown. */
export const ERASE_MS_PER_CHAR = 8;
/** A long rewind is sped up so its animation never takes longer than this. */
const ERASE_MAX_MS = 1500;

export function rewindNote(memo: string, erased: string): string {
  const what = memo !== "" ? memo : erased.trim().replace(/\s+/g, " ").slice(0, 60);
  return `[explored: ${JSON.stringify(what)} → rewound]`;
}

function hookLines(ev: Extract<DecodeEvent, { type: "hook-log" }>): string[] {
  return ev.text
    .replace(/\n$/, "")
    .split("\n")
    .map((line) => `${ev.hook} @${ev.step}  ${line}`);
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The line under a finished answer; `pausedMs` (time spent showing rewinds) is not counted
 * against the generation speed. */
export function statusText(session: ChatSession, done?: DoneEvent, pausedMs = 0): string {
  const parts: string[] = [];
  const s = done?.stats;
  if (s) {
    const ms = s.totalMs - pausedMs;
    const rate = ms > 0 ? (s.sampledTokens * 1000) / ms : s.tokensPerSecond;
    parts.push(`${s.sampledTokens} tokens`, `${rate.toFixed(1)} tok/s`);
  }
  if (Number.isFinite(session.lastEntropy)) parts.push(`H ${session.lastEntropy.toFixed(2)} nats`);
  if (s) {
    parts.push(`${s.vmCalls} VM call${s.vmCalls === 1 ? "" : "s"}`);
    if (s.hookCalls > 0) parts.push(`${s.hookCalls} hook calls`);
    if (s.rewinds > 0) parts.push(`${s.rewinds} rewind${s.rewinds === 1 ? "" : "s"}`);
  }
  return parts.join(" · ");
}

export function doneReasonText(done: DoneEvent): string | undefined {
  switch (done.reason) {
    case "aborted":
      return "stopped";
    case "context-full":
      return "the context is full: /reset starts over";
    case "max-tokens":
      return "token limit reached";
    default:
      return undefined;
  }
}

export class TtyView implements ChatView {
  readonly tone: Tone;
  private area: LiveArea | undefined;
  private inRegion = false;
  private console: string[] = [];
  private notes: string[] = [];
  private skipRequested = false;
  private started = 0;
  private tokens = 0;
  private vmCalls = 0;
  /** Time spent animating rewinds in this turn (the model waited meanwhile). */
  private pausedMs = 0;

  constructor(
    private readonly out: NodeJS.WriteStream,
    private readonly err: NodeJS.WritableStream = out,
    colour = true,
  ) {
    this.tone = makeTone(colour);
  }

  private columns(): number {
    return this.out.columns || 80;
  }

  turnStarted(): void {
    this.area = new LiveArea(
      this.out,
      () => this.columns(),
      () => this.out.rows || 24,
      this.tone.yellow("↶ rewound above the top of the screen; the answer goes on:"),
    );
    this.inRegion = false;
    this.console = [];
    this.notes = [];
    this.started = performance.now();
    this.tokens = 0;
    this.vmCalls = 0;
    this.pausedMs = 0;
    this.area.setFooter([this.tone.dim("… thinking (Ctrl-C stops)")]);
  }

  async event(ev: DecodeEvent, session: ChatSession): Promise<void> {
    const area = this.area!;
    const t = this.tone;
    switch (ev.type) {
      case "token":
        this.tokens++;
        area.append(ev.text, this.inRegion ? t.code : undefined);
        break;
      case "region-start":
        this.inRegion = true;
        // The opening "[C:" arrived before the scanner recognised it: colour it now.
        area.restyle(area.length - ev.offset, t.code);
        break;
      case "region-end":
        this.inRegion = false;
        break;
      case "injection":
        area.append(ev.text, /VM\[error:/.test(ev.text) ? t.red : t.vm);
        break;
      case "vm":
        this.vmCalls++;
        if (ev.origin === "setup" && !ev.outcome.ok) {
          this.console.push(t.red(`hook program: ${describeError(ev.outcome.error)}`));
        }
        break;
      case "hook-log":
        this.console.push(...hookLines(ev));
        break;
      case "hook-error":
        this.console.push(t.red(`${ev.hook} @${ev.step}  error: ${ev.message}`));
        break;
      case "rewind":
        await this.animateErase(ev.erased.length, session);
        this.notes.push(rewindNote(ev.memo, ev.erased));
        break;
      case "done":
        // The stop text (if any) is cut from the answer: take it off the screen too.
        if (area.content !== ev.text && area.content.startsWith(ev.text)) {
          area.erase(area.content.length - ev.text.length);
        }
        return;
    }
    area.setFooter(this.footer(session));
  }

  private async animateErase(n: number, session: ChatSession): Promise<void> {
    const started = performance.now();
    try {
      await this.eraseSlowly(n, session);
    } finally {
      this.pausedMs += performance.now() - started;
    }
  }

  private async eraseSlowly(n: number, session: ChatSession): Promise<void> {
    const area = this.area!;
    this.skipRequested = false;
    const perChar = Math.min(ERASE_MS_PER_CHAR, ERASE_MAX_MS / Math.max(1, n));
    area.setFooter([...this.footer(session), this.tone.yellow("↶ rewinding (any key skips)")]);
    let left = n;
    while (left > 0 && !this.skipRequested) {
      // Timers are coarse: erase as many characters as the time that passed allows.
      const t0 = performance.now();
      await sleep(perChar);
      const step = Math.max(1, Math.round((performance.now() - t0) / perChar));
      const k = Math.min(left, step);
      area.erase(k);
      left -= k;
    }
    if (left > 0) area.erase(left);
  }

  private footer(session: ChatSession): string[] {
    const t = this.tone;
    const lines: string[] = [];
    if (this.console.length > 0) {
      lines.push(t.magenta("┌ hook console"));
      for (const l of this.console.slice(-4)) lines.push(t.magenta("│ ") + l);
    }
    for (const n of this.notes.slice(-2)) lines.push(t.dim(n));
    const secs = (performance.now() - this.started - this.pausedMs) / 1000;
    const rate = secs > 0 ? (this.tokens / secs).toFixed(1) : "0";
    const entropy = Number.isFinite(session.lastEntropy) ? session.lastEntropy.toFixed(2) : "–";
    lines.push(
      t.dim(
        `… ${this.tokens} tokens · ${rate} tok/s · H ${entropy} nats · ${this.vmCalls} VM calls`,
      ),
    );
    return lines;
  }

  turnEnded(done: DoneEvent, session: ChatSession): void {
    const t = this.tone;
    this.area?.close();
    this.area = undefined;
    const out: string[] = [];
    if (this.console.length > 0) {
      out.push(t.magenta("┌ hook console"));
      const shown = this.console.slice(0, 20);
      for (const l of shown) out.push(t.magenta("│ ") + l);
      if (this.console.length > shown.length)
        out.push(t.magenta(`│ … ${this.console.length - shown.length} more lines`));
      out.push(t.magenta("└"));
    }
    for (const n of this.notes) out.push(t.dim(n));
    const reason = doneReasonText(done);
    const status = statusText(session, done, this.pausedMs);
    out.push(t.dim(reason ? `${status} · ${reason}` : status));
    this.out.write(out.join("\n") + "\n");
  }

  skip(): void {
    this.skipRequested = true;
  }

  info(text: string): void {
    this.out.write(text.endsWith("\n") ? text : text + "\n");
  }

  note(text: string): void {
    this.info(this.tone.dim(text));
  }

  error(text: string): void {
    // A turn that failed midway leaves no footer behind.
    this.area?.close();
    this.area = undefined;
    this.err.write(this.tone.red(text) + "\n");
  }

  vmOutcome(outcome: VmOutcome): void {
    const shown = execResult(outcome);
    if (shown.printed !== undefined) this.info(shown.printed);
    if (shown.result !== undefined) this.info(this.tone.vm(shown.result));
    if (shown.error !== undefined) this.error(shown.error);
  }
}

/** What /exec shows: what the code printed, then its value as VM[…] or its error. */
export function execResult(outcome: VmOutcome): {
  printed?: string;
  result?: string;
  error?: string;
} {
  const printed = outcome.stdout !== "" ? outcome.stdout.replace(/\n$/, "") : undefined;
  if (!outcome.ok) return { printed, error: `VM[error: ${describeError(outcome.error)}]` };
  if (outcome.value.ctype === "void") return { printed, result: printed ? undefined : "VM[]" };
  return { printed, result: `VM[${valueText(outcome.value)}]` };
}

export class PlainView implements ChatView {
  readonly tone = makeTone(false);

  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly err: NodeJS.WritableStream,
  ) {}

  turnStarted(): void {}

  async event(ev: DecodeEvent): Promise<void> {
    switch (ev.type) {
      case "hook-log":
        for (const l of hookLines(ev)) this.err.write(`[hook] ${l}\n`);
        break;
      case "hook-error":
        this.err.write(`[hook] ${ev.hook} @${ev.step}  error: ${ev.message}\n`);
        break;
      case "vm":
        if (ev.origin === "setup" && !ev.outcome.ok)
          this.err.write(`[hook] hook program: ${describeError(ev.outcome.error)}\n`);
        break;
      case "rewind":
        this.err.write(`${rewindNote(ev.memo, ev.erased)}\n`);
        break;
      default:
        break;
    }
  }

  turnEnded(done: DoneEvent): void {
    // Only the final text: what a rewind erased never reaches a pipe.
    this.out.write(done.text.replace(/\n+$/, "") + "\n");
    const reason = doneReasonText(done);
    if (done.reason === "aborted" || done.reason === "context-full")
      this.err.write(`(${reason})\n`);
  }

  skip(): void {}

  info(text: string): void {
    this.out.write(text.endsWith("\n") ? text : text + "\n");
  }

  note(text: string): void {
    this.err.write(text + "\n");
  }

  error(text: string): void {
    this.err.write(text + "\n");
  }

  vmOutcome(outcome: VmOutcome): void {
    const shown = execResult(outcome);
    if (shown.printed !== undefined) this.info(shown.printed);
    if (shown.result !== undefined) this.info(shown.result);
    if (shown.error !== undefined) this.error(shown.error);
  }
}
