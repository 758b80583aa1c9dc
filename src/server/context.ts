// What the routes share: the served model once it is loaded (the decode host and the limits),
// and what exists from the start (metrics, keys). The server listens before it loads
// the model, so the model-dependent parts are behind getters that answer 503 while loading.
import { basename } from "node:path";
import { ApiError } from "./errors.js";
import type { ServerMetrics } from "./metrics.js";
import type { ServerLimits } from "./request-plan.js";
import type { DecodeHost } from "./decode-host.js";
import { VmWorkerRunner } from "../vm/worker-runner.js";
import { availableParallelism } from "node:os";

/** The parts of the context that exist once the model is loaded. */
export interface LoadedModel {
  /** The engine's thread (this one or the decode worker): requests, slots, tokenizer. */
  host: DecodeHost;
  limits: ServerLimits & {
    /** Milliseconds a generation may run before it is cancelled. */
    deadlineMs: number;
    /** A stream writes to its socket at most once per this many milliseconds. */
    streamIntervalMs: number;
  };
}

/** The name clients pass as `model`: the file name without `.gguf`. */
export function modelIdOf(path: string): string {
  return basename(path).replace(/\.gguf$/i, "");
}

/** Seconds a client should wait before asking again while the model loads. */
const LOADING_RETRY_AFTER = "1";

/** VM workers for programs that must not run on a decode thread, so that one computing for
 * seconds stalls no stream. At least two, so that one such program does not hold up every other
 * request's regions; started on demand. The HTTP thread has a pool, and so does the decode
 * worker (for regions that do not read the model). */
export function serverVmWorkers(): VmWorkerRunner {
  return new VmWorkerRunner({ poolSize: Math.max(2, availableParallelism()) });
}

export class ServerContext {
  private model: LoadedModel | undefined;
  /** Unix seconds. */
  readonly startedAt = Math.floor(Date.now() / 1000);
  /** VM workers for /v1/exec (and, with the decode loop on this thread, for regions that do not
   * read the model). */
  readonly vmWorkers = serverVmWorkers();

  constructor(
    readonly metrics: ServerMetrics,
    /** Bearer keys accepted on /v1/*; empty: no auth. */
    readonly apiKeys: readonly string[],
    /** Largest request body in bytes (413 beyond). */
    readonly bodyBytes: number,
    /** The model's path or hf: URI as given (its id is known before it loads). */
    private readonly modelSource: string,
  ) {}

  get ready(): boolean {
    return this.model !== undefined;
  }

  /** Called once the model is loaded; from then on every route serves. */
  attach(model: LoadedModel): void {
    this.model = model;
  }

  /** The 503 every model route answers while the model loads. */
  loadingError(): ApiError {
    return new ApiError(
      503,
      `the model ${this.modelId} is still loading; retry shortly`,
      "server_overloaded",
      null,
      "model_loading",
      { "retry-after": LOADING_RETRY_AFTER },
    );
  }

  private loaded(): LoadedModel {
    if (!this.model) throw this.loadingError();
    return this.model;
  }

  get host(): DecodeHost {
    return this.loaded().host;
  }
  get limits(): LoadedModel["limits"] {
    return this.loaded().limits;
  }

  /** The name clients pass as `model`. */
  get modelId(): string {
    return modelIdOf(this.model?.host.model.path ?? this.modelSource);
  }

  /** Throws a 404 in OpenAI's shape unless `model` names the served model. */
  checkModel(model: string): void {
    const path = this.host.model.path;
    if (model !== this.modelId && model !== basename(path))
      throw new ApiError(
        404,
        `the model '${model}' does not exist; this server serves '${this.modelId}'`,
        "invalid_request_error",
        "model",
        "model_not_found",
      );
  }
}
