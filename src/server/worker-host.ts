// The HTTP thread's side of the decode worker (decode-worker.ts): starts it, forwards requests,
// cancels and tokenizer calls as messages, and hands each step's events to the requests' sinks.
// Slot counts and the decode side's metrics arrive with every step's message.
import { MessageChannel, Worker, type MessagePort } from "node:worker_threads";
import {
  fromWire,
  type DecodeHost,
  type JobEnd,
  type ResponseSink,
  type ModelFacts,
  type RequestBody,
  type StartedFacts,
  type StartedRequest,
  type TokenizeResult,
} from "./decode-host.js";
import { ApiError } from "./errors.js";
import type { HostOptions } from "./local-host.js";
import { applyMetricDelta } from "./metric-relay.js";
import type { DecodeMetrics } from "./metrics.js";
import type { FromWorker, StepEntry, ToWorker, WireEnd } from "./worker-protocol.js";

interface RequestEntry {
  sink: ResponseSink;
  /** Choices (known once the worker has planned the request). */
  n: number;
  ended: Set<number>;
  /** A choice whose sink threw: its events stop, and it ends with that error. */
  failed: Map<number, Error>;
  started?: StartedRequest;
}

interface Call {
  resolve(value: unknown): void;
  reject(err: Error): void;
}

/** Starts the decode worker and resolves once its model is loaded (rejects if it fails to). */
export async function openWorkerHost(
  options: HostOptions,
  metrics: DecodeMetrics,
): Promise<WorkerHost> {
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(new URL("./decode-worker.js", import.meta.url), {
    workerData: { options, port: port2 },
    transferList: [port2],
  });
  const model = await new Promise<ModelFacts>((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    worker.once("error", onError);
    port1.once("message", (msg: FromWorker) => {
      worker.off("error", onError);
      if (msg.t === "ready") resolve(msg.model);
      else reject(msg.t === "failed" ? fromWire(msg.error) : new Error(`unexpected ${msg.t}`));
    });
  }).catch(async (err) => {
    port1.close();
    // A worker that reported its failure ends itself; one that crashed is gone already.
    await new Promise((resolve) =>
      worker.threadId === -1 ? resolve(0) : worker.once("exit", resolve),
    );
    throw err;
  });
  return new WorkerHost(worker, port1, model, metrics);
}

export class WorkerHost implements DecodeHost {
  busy = 0;
  waiting = 0;
  private nextId = 1;
  private readonly calls = new Map<number, Call>();
  private readonly requests = new Map<number, RequestEntry>();
  /** Why the worker is gone, once it is. */
  private gone: Error | undefined;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly worker: Worker,
    private readonly port: MessagePort,
    readonly model: ModelFacts,
    private readonly metrics: DecodeMetrics,
  ) {
    port.on("message", (msg: FromWorker) => this.receive(msg));
    worker.on("error", (err) => this.lost(err));
    worker.on("exit", (code) => this.lost(new Error(`the decode worker exited (${code})`)));
  }

  async start(request: RequestBody, sink: ResponseSink): Promise<StartedRequest> {
    const id = this.nextId++;
    const entry: RequestEntry = { sink, n: 0, ended: new Set(), failed: new Map() };
    this.requests.set(id, entry);
    try {
      await this.call({ t: "start", id, request });
    } catch (err) {
      this.requests.delete(id);
      throw err;
    }
    return entry.started!;
  }

  async tokenize(content: string, addSpecial: boolean, withPieces: boolean) {
    const id = this.nextId++;
    return (await this.call({
      t: "tokenize",
      id,
      content,
      addSpecial,
      withPieces,
    })) as TokenizeResult;
  }

  async detokenize(tokens: number[]): Promise<string> {
    return (await this.call({ t: "detokenize", id: this.nextId++, tokens })) as string;
  }

  /** Ends every request, frees the engine on the worker, and waits for the worker to stop. */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      if (this.gone) return resolve();
      this.worker.once("exit", () => resolve());
      this.post({ t: "close" });
    });
    return this.closing;
  }

  private post(msg: ToWorker): void {
    if (!this.gone) this.port.postMessage(msg);
  }

  private call(msg: ToWorker & { id: number }): Promise<unknown> {
    if (this.gone) return Promise.reject(this.unavailable());
    return new Promise((resolve, reject) => {
      this.calls.set(msg.id, { resolve, reject });
      this.port.postMessage(msg);
    });
  }

  private receive(msg: FromWorker): void {
    switch (msg.t) {
      case "reply": {
        const call = this.calls.get(msg.id);
        this.calls.delete(msg.id);
        if (msg.ok) call?.resolve(msg.value);
        else call?.reject(fromWire(msg.error));
        return;
      }
      case "step":
        this.busy = msg.busy;
        this.waiting = msg.waiting;
        // A started request's events come after its reply (in this message or a later one).
        for (const [id, facts] of msg.accepted) this.accepted(id, facts);
        for (const entry of msg.out) this.deliver(entry);
        // After the deliveries, whose first tokens and ends are written at once: prom-client's
        // updates (labels hashed, histograms bucketed) took ~70 µs per nano request on this
        // thread (CPU profile at one client). Nothing else runs on this thread in between, so
        // a /metrics read still finds them.
        if (msg.metrics) applyMetricDelta(this.metrics, msg.metrics);
        return;
      case "closed":
        // The worker ends itself (its exit handlers must run: see decode-worker.ts).
        this.gone = new Error("the server is shutting down");
        this.port.close();
        return;
    }
  }

  /** The worker queued the request: its events may follow. */
  private accepted(id: number, facts: StartedFacts): void {
    const call = this.calls.get(id);
    this.calls.delete(id);
    const entry = this.requests.get(id);
    if (entry) this.begin(id, entry, facts);
    call?.resolve(facts);
  }

  private begin(id: number, entry: RequestEntry, facts: StartedFacts): void {
    entry.n = facts.n;
    entry.started = {
      ...facts,
      cancel: (reason, choice) => this.post({ t: "cancel", id, reason, choice }),
    };
    entry.sink.begin(entry.started);
  }

  private deliver([id, choice, ev, end]: StepEntry): void {
    const r = this.requests.get(id);
    if (!r) return;
    // A run's text may be empty (tokens with no text of their own): null marks the end.
    if (ev !== null) {
      if (r.failed.has(choice)) return;
      try {
        if (typeof ev === "string") r.sink.tokens(choice, ev, end as number);
        else r.sink.event(choice, ev);
      } catch (err) {
        // This request's own handling failed (its response, its socket): it ends with the
        // error; the worker stops the choice at its next step.
        r.failed.set(choice, err as Error);
        if (typeof ev === "string" || ev.type !== "done")
          this.post({ t: "cancel", id, reason: "error", choice });
      }
      return;
    }
    const over = end as WireEnd;
    const failure = r.failed.get(choice) ?? ("error" in over ? fromWire(over.error) : undefined);
    this.end(id, r, choice, failure ? { error: failure } : (over as JobEnd));
  }

  private end(id: number, r: RequestEntry, choice: number, outcome: JobEnd): void {
    r.ended.add(choice);
    if (r.ended.size >= r.n) this.requests.delete(id);
    try {
      r.sink.end(choice, outcome);
    } catch (err) {
      process.emitWarning(`a request's end handler failed: ${(err as Error).message}`);
    }
  }

  private unavailable(): ApiError {
    return new ApiError(503, this.gone!.message, "server_error");
  }

  /** The worker is gone: every request ends with the reason, and later calls are refused. */
  private lost(err: Error): void {
    if (this.gone) return;
    this.gone = err;
    for (const call of this.calls.values()) call.reject(this.unavailable());
    this.calls.clear();
    for (const [id, r] of [...this.requests])
      for (let choice = 0; choice < r.n; choice++)
        if (!r.ended.has(choice)) this.end(id, r, choice, { error: err });
    this.requests.clear();
    this.busy = this.waiting = 0;
  }
}
