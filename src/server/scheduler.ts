// Continuous batching: one engine context, one long-lived decode loop. Each engine sequence is a
// slot; a request waits in a bounded queue until a slot is free, joins the running loop at the
// next step (on the free slot whose KV cache shares the longest prefix with its prompt, so only
// the new tokens are decoded), and leaves when it finishes or is cancelled.
import type { Engine, ObserveOptions } from "../engine/types.js";
import { DecodeLoop, cachedTokens, type GenerationRequest } from "../decode/loop.js";
import type { DecodeEvent, DoneEvent } from "../decode/events.js";
import type { LiveVm } from "../decode/sequence.js";
import { ApiError } from "./errors.js";
import type { DecodeMetrics } from "./metrics.js";
import type { VmWorkerRunner } from "../vm/worker-runner.js";

export type CancelReason = "disconnect" | "deadline" | "error";

export interface JobSpec {
  request: Omit<GenerationRequest, "seq" | "reusePrefix">;
  /** The prompt as the loop will tokenize it (chooses the slot with the longest shared prefix). */
  promptTokens: readonly number[];
  /** A VM session that only one request may drive at a time (ruffian.session). */
  session?: LiveVm;
  /** Milliseconds from submission after which the generation is cancelled. */
  deadlineMs?: number;
  onEvent(ev: DecodeEvent): void;
  /** Called exactly once: the sequence's done event, or the error that ended it. */
  onEnd(end: { done: DoneEvent; cancelled?: CancelReason } | { error: Error }): void;
}

/** A submitted request: where it is, and what cancelling it needs. */
export interface Ticket {
  readonly spec: JobSpec;
  state: "queued" | "running" | "done";
  seq: number;
  /** Prompt tokens found in the slot's cache and not decoded again. */
  reused: number;
  cancelled?: CancelReason;
  cancelledAt?: number;
  /** Tokens the sequence sampled after the cancel was asked for. */
  stepsAfterCancel: number;
  submittedAt: number;
  firstTokenAt?: number;
  /** What ended the request with an error (its own callback failed): reported at its end. */
  failure?: Error;
  timer?: NodeJS.Timeout;
}

export interface SchedulerOptions {
  /** Requests that may wait for a slot; one more is answered 503 (default 4 × slots). */
  queueLimit?: number;
  metrics: DecodeMetrics;
  /** Called at every step boundary (before a step takes new requests, and, with `idle` true,
   * before the loop waits for work or for VM workers): the decode worker receives requests and
   * sends the steps' events there. */
  onStep?: (idle: boolean) => void;
  /** Called after each step's tokens were sampled and dispatched, before their decode (see
   * RequestIntake.sampled): the decode worker sends a first token there. */
  onSampled?: () => void;
  /** Activations the engine records for glass-box reads (default: none, the fastest). */
  observe?: ObserveOptions;
  /** Runs regions that do not read the model off the loop's thread (see DecodeLoopOptions). */
  regionRunner?: VmWorkerRunner;
}

function sharedPrefix(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

export class Scheduler {
  readonly slots: number;
  readonly queueLimit: number;
  private readonly queue: Ticket[] = [];
  private readonly running = new Map<number, Ticket>();
  private readonly free = new Set<number>();
  private readonly busySessions = new Set<LiveVm>();
  private loop: DecodeLoop | undefined;
  private wake: ((more: boolean) => void) | undefined;
  private closed = false;
  private readonly runner: Promise<void>;
  private readonly metrics: DecodeMetrics;
  private readonly onStep: ((idle: boolean) => void) | undefined;
  private readonly onSampled: (() => void) | undefined;
  private readonly observe: ObserveOptions;
  private readonly regionRunner: VmWorkerRunner | undefined;

  constructor(
    readonly engine: Engine,
    options: SchedulerOptions,
  ) {
    this.slots = engine.capabilities.maxSequences;
    this.queueLimit = options.queueLimit ?? 4 * this.slots;
    this.metrics = options.metrics;
    this.observe = options.observe ?? {
      hidden: false,
      attention: false,
      kv: false,
      finalNorm: false,
    };
    this.regionRunner = options.regionRunner;
    this.onStep = options.onStep;
    this.onSampled = options.onSampled;
    for (let s = 0; s < this.slots; s++) this.free.add(s);
    this.metrics.slots.set(this.slots);
    this.runner = this.runLoop();
  }

  /** Queues a request; throws a 503 ApiError (with Retry-After) when the queue is full. */
  submit(spec: JobSpec): Ticket {
    if (this.closed) throw new ApiError(503, "the server is shutting down", "server_overloaded");
    if (this.queue.length >= this.queueLimit) {
      this.metrics.rejected.inc();
      throw new ApiError(
        503,
        `all ${this.slots} slots are busy and ${this.queue.length} requests are waiting; retry later`,
        "server_overloaded",
        null,
        "queue_full",
        { "retry-after": "1" },
      );
    }
    const ticket: Ticket = {
      spec,
      state: "queued",
      seq: -1,
      reused: 0,
      stepsAfterCancel: 0,
      submittedAt: performance.now(),
    };
    if (spec.deadlineMs !== undefined)
      ticket.timer = setTimeout(() => this.cancel(ticket, "deadline"), spec.deadlineMs);
    this.queue.push(ticket);
    this.metrics.queueDepth.set(this.queue.length);
    this.wake?.(true);
    return ticket;
  }

  /** Stops a request: a queued one leaves the queue, a running one ends at the next step. */
  cancel(ticket: Ticket, reason: CancelReason): void {
    if (ticket.state === "done" || ticket.cancelled) return;
    ticket.cancelled = reason;
    ticket.cancelledAt = performance.now();
    this.metrics.cancelled.inc({ reason });
    if (ticket.state === "queued") {
      this.queue.splice(this.queue.indexOf(ticket), 1);
      this.metrics.queueDepth.set(this.queue.length);
      this.settle(ticket);
      ticket.spec.onEnd({
        error:
          reason === "deadline"
            ? new ApiError(
                503,
                "the request waited for a slot past its deadline; retry later",
                "server_overloaded",
                null,
                "deadline_exceeded",
                { "retry-after": "1" },
              )
            : new ApiError(
                503,
                `the request was cancelled (${reason}) while queued`,
                "server_error",
              ),
      });
    } else {
      this.loop?.cancel(ticket.seq);
    }
  }

  get busy(): number {
    return this.running.size;
  }
  get waiting(): number {
    return this.queue.length;
  }

  /** Stops accepting work; running requests are cancelled; resolves when the loop has ended. */
  async close(): Promise<void> {
    this.closed = true;
    for (const t of [...this.queue]) this.cancel(t, "error");
    for (const t of [...this.running.values()]) this.cancel(t, "error");
    this.wake?.(false);
    await this.runner;
  }

  private settle(ticket: Ticket): void {
    ticket.state = "done";
    if (ticket.timer) clearTimeout(ticket.timer);
    if (ticket.spec.session) this.busySessions.delete(ticket.spec.session);
  }

  /** Requests joining at this step, each on the free slot sharing the most of its prompt. */
  private take(): GenerationRequest[] {
    this.onStep?.(false);
    const joining: GenerationRequest[] = [];
    for (let i = 0; i < this.queue.length && this.free.size > 0;) {
      const ticket = this.queue[i]!;
      const session = ticket.spec.session;
      if (session && this.busySessions.has(session)) {
        i++;
        continue;
      }
      this.queue.splice(i, 1);
      let best = -1;
      let bestShared = -1;
      for (const seq of this.free) {
        const shared = sharedPrefix(cachedTokens(this.engine, seq), ticket.spec.promptTokens);
        if (shared > bestShared) [best, bestShared] = [seq, shared];
      }
      this.free.delete(best);
      ticket.seq = best;
      ticket.state = "running";
      // The loop decodes at least the prompt's last token to get fresh logits.
      ticket.reused = Math.min(bestShared, ticket.spec.promptTokens.length - 1);
      this.running.set(best, ticket);
      if (session) this.busySessions.add(session);
      this.metrics.reusedTokens.inc(ticket.reused);
      this.metrics.promptTokens.inc(ticket.spec.promptTokens.length - ticket.reused);
      joining.push({
        ...ticket.spec.request,
        promptTokens: ticket.spec.promptTokens,
        seq: best,
        reusePrefix: true,
        live: session,
      });
    }
    this.metrics.queueDepth.set(this.queue.length);
    this.metrics.slotsBusy.set(this.running.size);
    return joining;
  }

  private wait(): Promise<boolean> {
    this.onStep?.(true);
    if (this.closed) return Promise.resolve(false);
    // The loop also waits while its sequences wait for VM workers: a request it cannot take
    // yet (no free slot) must not wake it at once, or it would spin.
    if (this.queue.length > 0 && this.free.size > 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      this.wake = (more) => {
        this.wake = undefined;
        resolve(more);
      };
    });
  }

  private dispatch(ev: DecodeEvent): void {
    const ticket = this.running.get(ev.seq);
    if (!ticket) return;
    const m = this.metrics;
    if (ev.type === "token") {
      m.generatedTokens.inc();
      if (ticket.firstTokenAt === undefined) {
        ticket.firstTokenAt = performance.now();
        m.timeToFirstToken.observe((ticket.firstTokenAt - ticket.submittedAt) / 1000);
      }
      if (ticket.cancelled) ticket.stepsAfterCancel++;
    } else if (ev.type === "injection") {
      m.injectedTokens.inc(ev.tokens.length);
    } else if (ev.type === "vm" && ev.origin === "region") {
      m.vmRegions.inc({
        language: ev.language,
        outcome: ev.outcome.ok ? "ok" : ev.outcome.error.kind,
      });
    }
    if (!ticket.failure) {
      try {
        ticket.spec.onEvent(ev);
      } catch (err) {
        // This request's own handling failed (its response, its socket): it ends with the
        // error, and the loop, which serves every other request too, goes on.
        ticket.failure = err as Error;
        if (ev.type !== "done") this.cancel(ticket, "error");
      }
    }
    if (ev.type !== "done") return;
    this.running.delete(ev.seq);
    this.free.add(ev.seq);
    this.settle(ticket);
    m.slotsBusy.set(this.running.size);
    if (ticket.cancelled && ticket.cancelledAt !== undefined) {
      m.cancelSteps.observe(ticket.stepsAfterCancel);
      m.cancelSeconds.observe((performance.now() - ticket.cancelledAt) / 1000);
    }
    const failure =
      ticket.failure ??
      (ev.reason === "error" ? new Error(ev.error ?? "the generation failed") : undefined);
    try {
      ticket.spec.onEnd(failure ? { error: failure } : { done: ev, cancelled: ticket.cancelled });
    } catch (err) {
      process.emitWarning(`a request's end handler failed: ${(err as Error).message}`);
    }
  }

  private async runLoop(): Promise<void> {
    const intake = {
      take: () => this.take(),
      wait: () => this.wait(),
      sampled: () => this.onSampled?.(),
    };
    while (!this.closed) {
      const loop = new DecodeLoop(this.engine, {
        observe: this.observe,
        regionRunner: this.regionRunner,
      });
      this.loop = loop;
      try {
        for await (const ev of loop.run([], intake)) this.dispatch(ev);
        return;
      } catch (err) {
        // A failure of the engine itself (a failure of one request's work ends only that
        // request, see DecodeLoop's fail): every running request ends with it; the loop restarts.
        for (const [seq, ticket] of [...this.running]) {
          this.running.delete(seq);
          this.free.add(seq);
          this.settle(ticket);
          ticket.spec.onEnd({ error: err as Error });
        }
        this.metrics.slotsBusy.set(0);
      }
    }
  }
}
