// The engine on the calling thread: opens the model (one sequence per slot), the scheduler, VM
// sessions and registered control vectors, and plans requests against them. `--decode-thread
// main` serves from it directly; the decode worker (decode-worker.ts) runs one and relays it.
import { openLlamaEngine, type LlamaEngine } from "../engine/llama/engine.js";
import { applyToContext } from "../steer/vector-args.js";
import type { ObserveOptions } from "../engine/types.js";
import type { VmProfileName } from "../vm/limits.js";
import type { VmWorkerRunner } from "../vm/worker-runner.js";
import type {
  DecodeHost,
  JobSink,
  ModelFacts,
  RequestBody,
  ResponseSink,
  StartedRequest,
  TokenizeResult,
} from "./decode-host.js";
import { ApiError, badRequest } from "./errors.js";
import type { DecodeMetrics } from "./metrics.js";
import { planChat, planCompletion, type ServerLimits } from "./request-plan.js";
import { Scheduler, type Ticket } from "./scheduler.js";
import { SessionStore } from "./sessions.js";
import { VectorRegistry, splitVectorArguments } from "./vectors.js";

/** What opening a host needs: plain data, so that it can travel to a worker thread. */
export interface HostOptions {
  /** A local GGUF file (hf: URIs are resolved before). */
  modelPath: string;
  slots: number;
  /** KV cells per slot (default: the model's training context, at most 4096). */
  ctx?: number;
  threads?: number;
  glassBox: boolean;
  /** A Jinja chat template (its text) used instead of the model's tokenizer.chat_template. */
  chatTemplate?: string;
  /** `--control-vector` values (NAME=PATH[:SCALE] registers, PATH[:SCALE] is context-wide). */
  controlVectors: readonly string[];
  profile: VmProfileName;
  queueLimit?: number;
  maxMessages: number;
  deadlineMs: number;
  /** A stream writes to its socket at most once per this many milliseconds (`--stream-interval`);
   * the decode worker sends what it has to the HTTP thread at a fraction of it. */
  streamIntervalMs: number;
}

export interface LocalHostParts {
  metrics: DecodeMetrics;
  /** Runs regions that cannot read the model off the decode thread. */
  regionRunner: VmWorkerRunner;
  /** See SchedulerOptions.onStep. */
  onStep?: (idle: boolean) => void;
  /** See SchedulerOptions.onSampled. */
  onSampled?: () => void;
}

const ALL: ObserveOptions = { hidden: true, attention: true, kv: true, finalNorm: true };
const NONE: ObserveOptions = { hidden: false, attention: false, kv: false, finalNorm: false };

export async function openLocalHost(options: HostOptions, parts: LocalHostParts) {
  const { named, global } = splitVectorArguments(options.controlVectors);
  // Per-request vectors go through the graph tap, which needs the shared KV buffer.
  const tap = options.glassBox || named.length > 0;
  const engine = await openLlamaEngine({
    modelPath: options.modelPath,
    sequences: options.slots,
    // Each slot holds --ctx cells, by default the model's training context (at most 4096).
    contextSize: (train) =>
      (options.ctx ?? Math.min(train > 0 ? train : 4096, 4096)) * options.slots,
    batchSize: Math.max(512, options.slots),
    // Without the tap, each slot gets its own KV stream: a token then attends only to its
    // own sequence's cells, not to every cell the other slots hold (measured in docs/server.md).
    glassBox: tap,
    kvUnified: tap,
    // As llama-server: without the tap nothing reads attention probabilities.
    flashAttention: !tap,
    threads: options.threads,
    chatTemplate: options.chatTemplate,
  });
  try {
    applyToContext(global, engine);
    return new LocalHost(engine, options, new VectorRegistry(named, engine), parts);
  } catch (err) {
    engine.dispose();
    throw err;
  }
}

export class LocalHost implements DecodeHost {
  readonly model: ModelFacts;
  readonly limits: ServerLimits;
  private readonly scheduler: Scheduler;
  private readonly sessions: SessionStore;

  constructor(
    readonly engine: LlamaEngine,
    private readonly options: HostOptions,
    readonly vectors: VectorRegistry,
    parts: LocalHostParts,
  ) {
    const slots = options.slots;
    this.limits = {
      slotContext: Math.floor(engine.capabilities.contextSize / slots),
      maxChoices: slots,
      maxMessages: options.maxMessages,
      defaultProfile: options.profile,
    };
    this.model = {
      path: engine.model.path,
      description: engine.model.description,
      nVocab: engine.capabilities.nVocab,
      slots,
      slotContext: this.limits.slotContext,
    };
    this.scheduler = new Scheduler(engine, {
      metrics: parts.metrics,
      regionRunner: parts.regionRunner,
      queueLimit: options.queueLimit,
      observe: options.glassBox ? ALL : NONE,
      onStep: parts.onStep,
      onSampled: parts.onSampled,
    });
    this.sessions = new SessionStore(engine);
  }

  get busy(): number {
    return this.scheduler.busy;
  }
  get waiting(): number {
    return this.scheduler.waiting;
  }

  async start(request: RequestBody, sink: ResponseSink): Promise<StartedRequest> {
    return this.startNow(request, sink);
  }

  /** Plans and queues a request at once; throws an ApiError when it is refused. */
  startNow({ endpoint, body }: RequestBody, sink: JobSink): StartedRequest {
    const plan = endpoint === "chat" ? planChat(this, body) : planCompletion(this, body);
    if (plan.session !== undefined && plan.n > 1)
      throw new ApiError(
        400,
        "a request with ruffian.session must have n = 1",
        "invalid_request_error",
        "n",
      );
    const session =
      plan.session !== undefined
        ? this.sessions.acquire(plan.session, plan.request.profile ?? this.limits.defaultProfile)
        : undefined;
    const tickets: Ticket[] = [];
    const started: StartedRequest = {
      n: plan.n,
      promptTokens: plan.promptTokens.length,
      stops: plan.request.stop ?? [],
      logprobs: plan.logprobs,
      stream: plan.stream,
      includeUsage: plan.includeUsage,
      tokenEvents: plan.tokenEvents,
      cancel: (reason, choice) => {
        for (const [i, t] of tickets.entries())
          if (choice === undefined || choice === i) this.scheduler.cancel(t, reason);
      },
    };
    sink.begin(started);
    let open = plan.n;
    const release = () => {
      if (--open === 0 && session) this.sessions.release(plan.session!);
    };
    try {
      for (let i = 0; i < plan.n; i++) {
        const ticket: Ticket = this.scheduler.submit({
          request: {
            ...plan.request,
            // Choice i samples with seed + i.
            sampling: { ...plan.request.sampling, seed: (plan.request.sampling?.seed ?? 0) + i },
          },
          promptTokens: plan.promptTokens,
          session,
          deadlineMs: this.options.deadlineMs,
          onEvent: (ev) => sink.event(i, ev),
          onEnd: (outcome) => {
            release();
            sink.end(i, "done" in outcome ? { ...outcome, reused: ticket.reused } : outcome);
          },
        });
        tickets.push(ticket);
      }
    } catch (err) {
      // The choices already queued end (they report to the sink, which ignores them).
      open = tickets.length;
      if (open === 0 && session) this.sessions.release(plan.session!);
      for (const t of tickets) this.scheduler.cancel(t, "error");
      throw err;
    }
    return started;
  }

  async tokenize(content: string, addSpecial: boolean, withPieces: boolean) {
    return this.tokenizeNow(content, addSpecial, withPieces);
  }

  tokenizeNow(content: string, addSpecial: boolean, withPieces: boolean): TokenizeResult {
    const tokens = this.engine.tokenize(content, { addSpecial, parseSpecial: true });
    if (!withPieces) return { tokens };
    return { tokens: tokens.map((id) => ({ id, piece: this.engine.tokenText(id) })) };
  }

  async detokenize(tokens: number[]): Promise<string> {
    return this.detokenizeNow(tokens);
  }

  detokenizeNow(tokens: number[]): string {
    const n = this.model.nVocab;
    const bad = tokens.findIndex((t) => t >= n);
    if (bad >= 0)
      throw badRequest(
        `token ${tokens[bad]} at index ${bad} is outside the vocabulary (0..${n - 1})`,
        `tokens[${bad}]`,
      );
    return this.engine.detokenize(tokens);
  }

  /** Ends every request and frees the engine (the region runner belongs to the caller). */
  async close(): Promise<void> {
    await this.scheduler.close();
    this.engine.dispose();
  }
}
