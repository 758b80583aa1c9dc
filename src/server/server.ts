// Starts `ruffian serve`: listens (loopback by default) with the Fastify app, then opens the
// model with one engine sequence per slot and starts the continuous-batching scheduler, on a
// decode worker thread (the default) or on the HTTP thread itself (`--decode-thread main`).
import { resolveModelPath } from "../engine/model-source.js";
import type { VmProfileName } from "../vm/limits.js";
import { buildApp, type ServerApp } from "./app.js";
import { ServerContext, modelIdOf, type LoadedModel } from "./context.js";
import type { DecodeHost, DecodeThread } from "./decode-host.js";
import { openLocalHost, type HostOptions } from "./local-host.js";
import { createMetrics } from "./metrics.js";
import { openWorkerHost } from "./worker-host.js";
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
  /** A Jinja chat template (its text) used instead of the model's tokenizer.chat_template. */
  chatTemplate?: string;
  /** `--control-vector` values: `NAME=PATH[:SCALE]` registers a vector that requests may name
   * (`ruffian.controlVectors`); `PATH[:SCALE]` is added for every request (llama.cpp's own,
   * context-wide). */
  controlVectors?: readonly string[];
  /** "worker" (default): the engine and the decode loop run on a worker thread and the HTTP
   * side (Fastify, chunks, SSE, socket writes) on this one; "main": all of it on this thread. */
  decodeThread?: DecodeThread;
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
  context: ServerContext;
  close(): Promise<void>;
}

export { modelIdOf };
export type { DecodeThread };

/**
 * Listens first, then loads the model: while it loads, /health answers 503 `loading` and every
 * model route 503 with Retry-After. Resolves once the model is loaded and every route serves.
 */
export async function startServer(options: ServeOptions): Promise<RunningServer> {
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
  let host: DecodeHost;
  try {
    await options.beforeLoad?.();
    const hostOptions = hostOptionsOf(options, modelPath);
    host = await openHost(options, hostOptions, context);
    context.attach(loadedModel(host, hostOptions));
  } catch (err) {
    await app.close();
    throw err;
  }
  let closed = false;
  return {
    url,
    app,
    context,
    async close() {
      if (closed) return;
      closed = true;
      await host.close();
      await context.vmWorkers.close();
      await app.close();
    },
  };
}

/** The host's options, with the serve defaults filled in (the limits read them too). */
function hostOptionsOf(options: ServeOptions, modelPath: string): HostOptions {
  return {
    modelPath,
    slots: options.slots ?? 4,
    ctx: options.ctx,
    threads: options.threads,
    glassBox: options.glassBox === true,
    chatTemplate: options.chatTemplate,
    controlVectors: options.controlVectors ?? [],
    profile: options.profile ?? "small",
    queueLimit: options.queueLimit,
    maxMessages: options.maxMessages ?? 256,
    deadlineMs: options.deadlineMs ?? 120_000,
    streamIntervalMs: options.streamIntervalMs ?? DEFAULT_STREAM_INTERVAL_MS,
  };
}

function openHost(
  options: ServeOptions,
  hostOptions: HostOptions,
  context: ServerContext,
): Promise<DecodeHost> {
  if ((options.decodeThread ?? "worker") === "worker")
    return openWorkerHost(hostOptions, context.metrics);
  // On this thread, regions that cannot read the model share /v1/exec's VM workers.
  return openLocalHost(hostOptions, { metrics: context.metrics, regionRunner: context.vmWorkers });
}

function loadedModel(host: DecodeHost, hostOptions: HostOptions): LoadedModel {
  return {
    host,
    limits: {
      slotContext: host.model.slotContext,
      maxChoices: host.model.slots,
      maxMessages: hostOptions.maxMessages,
      defaultProfile: hostOptions.profile,
      deadlineMs: hostOptions.deadlineMs,
      streamIntervalMs: hostOptions.streamIntervalMs,
    },
  };
}
