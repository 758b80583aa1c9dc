// Starts `ruffian serve`: opens the model with one engine sequence per slot, starts the
// continuous-batching scheduler and the Fastify app, and listens (loopback by default).
import { basename } from "node:path";
import { openEngine } from "../engine/open.js";
import { applyToContext } from "../steer/vector-args.js";
import type { LlamaEngine } from "../engine/open.js";
import type { VmProfileName } from "../vm/limits.js";
import { buildApp, type ServerApp, type ServerContext } from "./app.js";
import { ApiError } from "./errors.js";
import { createMetrics } from "./metrics.js";
import { Scheduler } from "./scheduler.js";
import { SessionStore } from "./sessions.js";

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
  /** Largest request body (default 1 MiB). */
  bodyBytes?: number;
  maxMessages?: number;
  threads?: number;
  /** Record activations for glass-box intrinsics (kv_read, emb_read, attn_score …); slower. */
  glassBox?: boolean;
  /** Model cache folder for hf: URIs. */
  modelsDir?: string;
  /** `FILE[:SCALE]` control vectors added for every request (llama.cpp's own, context-wide). */
  controlVectors?: readonly string[];
}

export interface RunningServer {
  url: string;
  app: ServerApp;
  engine: LlamaEngine;
  context: ServerContext;
  close(): Promise<void>;
}

/** The name clients pass as `model`: the file name without `.gguf`. */
export function modelIdOf(path: string): string {
  return basename(path).replace(/\.gguf$/i, "");
}

export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const slots = options.slots ?? 4;
  const engine = await openEngine(options.model, {
    sequences: slots,
    // Each slot holds --ctx cells, by default the model's training context (at most 4096).
    contextSize: (train) => (options.ctx ?? Math.min(train > 0 ? train : 4096, 4096)) * slots,
    batchSize: Math.max(512, slots),
    // Without the glass box, each slot gets its own KV stream: a token then attends only to its
    // own sequence's cells, not to every cell the other slots hold (measured in docs/server.md).
    glassBox: options.glassBox === true,
    kvUnified: options.glassBox === true,
    threads: options.threads,
    download: false,
    directory: options.modelsDir,
  });
  try {
    applyToContext(options.controlVectors, engine);
    return await listen(engine, options, slots);
  } catch (err) {
    engine.dispose();
    throw err;
  }
}

async function listen(
  engine: LlamaEngine,
  options: ServeOptions,
  slots: number,
): Promise<RunningServer> {
  const metrics = createMetrics();
  const all = { hidden: true, attention: true, kv: true, finalNorm: true };
  const none = { hidden: false, attention: false, kv: false, finalNorm: false };
  const scheduler = new Scheduler(engine, {
    metrics,
    queueLimit: options.queueLimit,
    observe: options.glassBox ? all : none,
  });
  const modelId = modelIdOf(engine.model.path);
  const context: ServerContext = {
    engine,
    scheduler,
    sessions: new SessionStore(engine),
    metrics,
    limits: {
      slotContext: Math.floor(engine.capabilities.contextSize / slots),
      maxChoices: slots,
      maxMessages: options.maxMessages ?? 256,
      defaultProfile: options.profile ?? "small",
      bodyBytes: options.bodyBytes ?? 1024 * 1024,
      deadlineMs: options.deadlineMs ?? 120_000,
    },
    modelId,
    startedAt: Math.floor(Date.now() / 1000),
    apiKeys: options.apiKeys ?? [],
    checkModel(model) {
      if (model !== modelId && model !== basename(engine.model.path))
        throw new ApiError(
          404,
          `the model '${model}' does not exist; this server serves '${modelId}'`,
          "invalid_request_error",
          "model",
          "model_not_found",
        );
    },
  };
  const app = buildApp(context);
  const address = await app.listen({
    host: options.host ?? "127.0.0.1",
    port: options.port ?? 8080,
  });
  let closed = false;
  return {
    url: address,
    app,
    engine,
    context,
    async close() {
      if (closed) return;
      closed = true;
      await scheduler.close();
      await app.close();
      engine.dispose();
    },
  };
}
