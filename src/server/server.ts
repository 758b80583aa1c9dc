// Starts `ruffian serve`: listens (loopback by default) with the Fastify app, then opens the
// model with one engine sequence per slot and starts the continuous-batching scheduler.
import { openLlamaEngine } from "../engine/llama/engine.js";
import { resolveModelPath } from "../engine/model-source.js";
import { applyToContext } from "../steer/vector-args.js";
import type { LlamaEngine } from "../engine/open.js";
import type { VmProfileName } from "../vm/limits.js";
import { buildApp, type ServerApp } from "./app.js";
import { ServerContext, modelIdOf, type LoadedModel } from "./context.js";
import { createMetrics } from "./metrics.js";
import { Scheduler } from "./scheduler.js";
import { SessionStore } from "./sessions.js";
import { VectorRegistry, splitVectorArguments } from "./vectors.js";
import { DEFAULT_STREAM_INTERVAL_MS } from "./sse.js";

export interface ServeOptions {
  /** GGUF path or hf: URI (cached). */
  model: string;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 8080; 0 picks a free port. */
  port?: number;
  /** Sequences decoded together (default 4). */
  slots?: number;
  /** KV cells per slot (default: the model's training context, at most 4096). */
  ctx?: number;
  /** Bearer keys for /v1/* (default none: no auth). */
  apiKeys?: readonly string[];
  /** VM profile of requests that name none (default "small": a runaway region stalls the
   * batch for at most 0.5 s). */
  profile?: VmProfileName;
  /** Requests that may wait for a slot (default 4 × slots). */
  queueLimit?: number;
  /** Milliseconds a generation may run (default 120,000). */
  deadlineMs?: number;
  /** A stream writes to its socket at most once per this many milliseconds (default
   * DEFAULT_STREAM_INTERVAL_MS; 0: every chunk as it is made). */
  streamIntervalMs?: number;
  /** Largest request body (default 1 MiB). */
  bodyBytes?: number;
  maxMessages?: number;
  threads?: number;
  /** Record activations for glass-box intrinsics (kv_read, emb_read, attn_score …); slower. */
  glassBox?: boolean;
  /** Model cache folder for hf: URIs. */
  modelsDir?: string;
  /** `--control-vector` values: `NAME=PATH[:SCALE]` registers a vector that requests may name
   * (`ruffian.controlVectors`); `PATH[:SCALE]` is added for every request (llama.cpp's own,
   * context-wide). */
  controlVectors?: readonly string[];
  /** Called once the server listens, before the model loads (the CLI prints its URL then). */
  onListening?: (url: string) => void;
  /**
   * Awaited after the server listens and before the model loads. A test hook: it lets a test
   * see the loading state (503s) without racing a real load; the real model loads after it.
   */
  beforeLoad?: () => Promise<void>;
}

export interface RunningServer {
  url: string;
  app: ServerApp;
  engine: LlamaEngine;
  context: ServerContext;
  close(): Promise<void>;
}

export { modelIdOf };

/**
 * Listens first, then loads the model: while it loads, /health answers 503 `loading` and every
 * model route 503 with Retry-After. Resolves once the model is loaded and every route serves.
 */
export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const slots = options.slots ?? 4;
  const { named, global } = splitVectorArguments(options.controlVectors);
  const context = new ServerContext(
    createMetrics(),
    options.apiKeys ?? [],
    options.bodyBytes ?? 1024 * 1024,
    options.model,
  );
  // A missing file or uncached hf: model fails before anything listens.
  const modelPath = await resolveModelPath(options.model, {
    download: false,
    directory: options.modelsDir,
  });
  const app = buildApp(context);
  const url = await app.listen({ host: options.host ?? "127.0.0.1", port: options.port ?? 8080 });
  options.onListening?.(url);
  let engine: LlamaEngine | undefined;
  try {
    await options.beforeLoad?.();
    // Per-request vectors go through the graph tap, which needs the shared KV buffer.
    const tap = options.glassBox === true || named.length > 0;
    engine = await openLlamaEngine({
      modelPath,
      sequences: slots,
      // Each slot holds --ctx cells, by default the model's training context (at most 4096).
      contextSize: (train) => (options.ctx ?? Math.min(train > 0 ? train : 4096, 4096)) * slots,
      batchSize: Math.max(512, slots),
      // Without the tap, each slot gets its own KV stream: a token then attends only to its
      // own sequence's cells, not to every cell the other slots hold (measured in docs/server.md).
      glassBox: tap,
      kvUnified: tap,
      threads: options.threads,
    });
    applyToContext(global, engine);
    const vectors = new VectorRegistry(named, engine);
    context.attach(loadedModel(engine, context, options, slots, vectors));
  } catch (err) {
    await app.close();
    engine?.dispose();
    throw err;
  }
  const loaded = engine;
  let closed = false;
  return {
    url,
    app,
    engine: loaded,
    context,
    async close() {
      if (closed) return;
      closed = true;
      await context.scheduler.close();
      await context.vmWorkers.close();
      await app.close();
      loaded.dispose();
    },
  };
}

function loadedModel(
  engine: LlamaEngine,
  context: ServerContext,
  options: ServeOptions,
  slots: number,
  vectors: VectorRegistry,
): LoadedModel {
  const all = { hidden: true, attention: true, kv: true, finalNorm: true };
  const none = { hidden: false, attention: false, kv: false, finalNorm: false };
  return {
    engine,
    scheduler: new Scheduler(engine, {
      metrics: context.metrics,
      regionRunner: context.vmWorkers,
      queueLimit: options.queueLimit,
      observe: options.glassBox ? all : none,
    }),
    sessions: new SessionStore(engine),
    vectors,
    limits: {
      slotContext: Math.floor(engine.capabilities.contextSize / slots),
      maxChoices: slots,
      maxMessages: options.maxMessages ?? 256,
      defaultProfile: options.profile ?? "small",
      deadlineMs: options.deadlineMs ?? 120_000,
      streamIntervalMs: options.streamIntervalMs ?? DEFAULT_STREAM_INTERVAL_MS,
    },
  };
}
