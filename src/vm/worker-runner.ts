// Runs C, Lisp and CALC programs that do not read model state on warm worker threads with a big
// native stack (deep recursion works; a region computing for seconds leaves the caller's event
// loop free). Same VmOutcome, same limits (instructions, wall clock, output cap) as runC,
// runLisp and runCalc on the calling thread.
//
//   import { sharedRunner } from "./worker-runner.js";
//   const runner = sharedRunner();                       // process-wide, started on first use
//   const a = await runner.run({ language: "c", source: "int main(){return 6;}" });
//   const b = runner.runSync({ language: "calc", source: "2*3" });  // blocks (Atomics.wait)
//
// `run` spreads jobs over a small pool (cores − 1 workers, at least one) and queues the rest;
// `runSync` uses a worker of its own and blocks the calling thread until the answer comes. A
// worker that dies (an exception, out of memory) or stays silent past the job's wall-clock
// limit plus a grace period is terminated and replaced, and the job ends in a VmFailure that
// says so. Idle workers do not keep the process alive.
import { availableParallelism } from "node:os";
import {
  MessageChannel,
  Worker,
  receiveMessageOnPort,
  type MessagePort,
} from "node:worker_threads";
import { jobWallClockMs, type VmJob } from "./job.js";
import type { VmFailure, VmOutcome } from "./result.js";
import { WORKER_STACK_MB } from "./stack.js";
import type { WorkerAnswer, WorkerRequest, WorkerSetup } from "./worker-main.js";

export interface WorkerRunnerOptions {
  /** Native stack of each worker, in MB (default WORKER_STACK_MB). */
  stackSizeMb?: number;
  /** Workers serving `run` (default: the machine's cores − 1, at least 1). */
  poolSize?: number;
  /** How long past a job's wall-clock limit a worker may stay silent before it counts as hung
   * (default 2,000 ms: compiling and posting the answer happen outside the VM's clock). */
  graceMs?: number;
  /** Caps each worker's JS heap (worker_threads' resourceLimits); unset, node's default. */
  maxOldGenerationSizeMb?: number;
}

export interface JobOptions {
  /** Overrides the time after which a silent worker is terminated (default: the job's
   * wall-clock limit + graceMs). */
  timeoutMs?: number;
}

const DEFAULT_GRACE_MS = 2000;
const WORKER_URL = new URL("./worker-main.js", import.meta.url);

function workerFailure(message: string): VmFailure {
  return {
    ok: false,
    error: { kind: "runtime", message, line: 0, column: 0 },
    stdout: "",
    stats: { compileMs: 0, runMs: 0, instructions: 0, memoryBytes: 0 },
  };
}

/** One warm worker thread and the channel to it. */
class VmWorker {
  readonly thread: Worker;
  readonly port: MessagePort;
  readonly answered = new Int32Array(new SharedArrayBuffer(4));
  /** Why the thread ended, once it has. */
  death: string | null = null;

  constructor(options: Required<Pick<WorkerRunnerOptions, "stackSizeMb">> & WorkerRunnerOptions) {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    const setup: WorkerSetup = { port: port2, answered: this.answered };
    this.thread = new Worker(WORKER_URL, {
      workerData: setup,
      transferList: [port2],
      resourceLimits: {
        stackSizeMb: options.stackSizeMb,
        ...(options.maxOldGenerationSizeMb
          ? { maxOldGenerationSizeMb: options.maxOldGenerationSizeMb }
          : {}),
      },
      stdout: false,
      stderr: false,
    });
    this.thread.on("error", (e) => (this.death ??= e.message));
    this.thread.on("exit", (code) => (this.death ??= `exit code ${code}`));
    this.idle();
  }

  /** Lets the process exit while this worker waits for work. */
  idle(): void {
    this.thread.unref();
    this.port.unref();
  }
  busy(): void {
    this.thread.ref();
    this.port.ref();
  }
  stop(): void {
    this.death ??= "stopped";
    this.port.close();
    void this.thread.terminate();
  }
}

interface Pending {
  request: WorkerRequest;
  timeoutMs: number;
  resolve: (outcome: VmOutcome) => void;
}

export class VmWorkerRunner {
  private readonly options: Required<Pick<WorkerRunnerOptions, "stackSizeMb">> &
    WorkerRunnerOptions;
  private readonly poolSize: number;
  private readonly graceMs: number;
  private readonly pool: Array<{ worker: VmWorker; job: Pending | null }> = [];
  private readonly queue: Pending[] = [];
  private syncWorker: VmWorker | null = null;
  private nextId = 1;
  private closed = false;

  constructor(options: WorkerRunnerOptions = {}) {
    this.options = { ...options, stackSizeMb: options.stackSizeMb ?? WORKER_STACK_MB };
    this.poolSize = Math.max(1, options.poolSize ?? availableParallelism() - 1);
    this.graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
  }

  /** Runs a job on a pool worker; never rejects. */
  run(job: VmJob, options: JobOptions = {}): Promise<VmOutcome> {
    if (this.closed) return Promise.resolve(workerFailure("the VM worker runner is closed"));
    return new Promise((resolve) => {
      this.queue.push({
        request: { id: this.nextId++, job },
        timeoutMs: this.timeoutFor(job, options),
        resolve,
      });
      this.dispatch();
    });
  }

  /** Runs a job on this runner's synchronous worker, blocking the calling thread. */
  runSync(job: VmJob, options: JobOptions = {}): VmOutcome {
    if (this.closed) return workerFailure("the VM worker runner is closed");
    const timeoutMs = this.timeoutFor(job, options);
    if (!this.syncWorker || this.syncWorker.death) this.syncWorker = new VmWorker(this.options);
    const worker = this.syncWorker;
    const request: WorkerRequest = { id: this.nextId++, job };
    const seen = Atomics.load(worker.answered, 0);
    worker.port.postMessage(request);
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const left = deadline - performance.now();
      if (left <= 0 || Atomics.wait(worker.answered, 0, seen, left) === "timed-out") break;
      const answer = receiveMessageOnPort(worker.port)?.message as WorkerAnswer | undefined;
      if (answer?.id === request.id) return answer.outcome;
    }
    // No answer in time: the thread is stuck (or died, which a blocked caller cannot see).
    worker.stop();
    this.syncWorker = null;
    return workerFailure(hungMessage(timeoutMs));
  }

  /** Stops every worker; later jobs fail at once. */
  async close(): Promise<void> {
    this.closed = true;
    const threads = this.pool.map((p) => p.worker);
    if (this.syncWorker) threads.push(this.syncWorker);
    this.syncWorker = null;
    for (const slot of this.pool) slot.job?.resolve(workerFailure("the VM worker runner closed"));
    for (const p of this.queue) p.resolve(workerFailure("the VM worker runner closed"));
    this.pool.length = 0;
    this.queue.length = 0;
    await Promise.all(threads.map((w) => (w.stop(), w.thread.terminate())));
  }

  private timeoutFor(job: VmJob, options: JobOptions): number {
    return options.timeoutMs ?? jobWallClockMs(job) + this.graceMs;
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let slot = this.pool.find((p) => p.job === null);
      if (!slot && this.pool.length < this.poolSize) {
        slot = { worker: this.startPoolWorker(), job: null };
        this.pool.push(slot);
      }
      if (!slot) return;
      this.start(slot, this.queue.shift()!);
    }
  }

  private startPoolWorker(): VmWorker {
    const worker = new VmWorker(this.options);
    worker.port.on("message", (answer: WorkerAnswer) => {
      const slot = this.pool.find((p) => p.worker === worker);
      if (!slot?.job || slot.job.request.id !== answer.id) return;
      this.finish(slot, answer.outcome, false);
    });
    worker.thread.on("exit", () => {
      const slot = this.pool.find((p) => p.worker === worker);
      if (slot?.job) this.finish(slot, workerFailure(diedMessage(worker.death)), true);
      else if (slot) this.replace(slot);
    });
    return worker;
  }

  private readonly timers = new Map<number, NodeJS.Timeout>();

  private start(slot: { worker: VmWorker; job: Pending | null }, job: Pending): void {
    slot.job = job;
    slot.worker.busy();
    this.timers.set(
      job.request.id,
      setTimeout(() => {
        if (slot.job === job) this.finish(slot, workerFailure(hungMessage(job.timeoutMs)), true);
      }, job.timeoutMs),
    );
    slot.worker.port.postMessage(job.request);
  }

  private finish(
    slot: { worker: VmWorker; job: Pending | null },
    outcome: VmOutcome,
    replace: boolean,
  ): void {
    const job = slot.job!;
    clearTimeout(this.timers.get(job.request.id));
    this.timers.delete(job.request.id);
    slot.job = null;
    if (replace) this.replace(slot);
    else slot.worker.idle();
    job.resolve(outcome);
    this.dispatch();
  }

  /** Drops a dead or hung worker from the pool; dispatch starts a fresh one when needed. */
  private replace(slot: { worker: VmWorker; job: Pending | null }): void {
    slot.worker.stop();
    const i = this.pool.indexOf(slot);
    if (i >= 0) this.pool.splice(i, 1);
  }
}

function hungMessage(timeoutMs: number): string {
  return `the VM worker did not answer within ${Math.round(timeoutMs)} ms (the wall-clock limit plus a grace period) and was replaced`;
}

function diedMessage(why: string | null): string {
  return `the VM worker died (${why ?? "unknown cause"}) and was replaced; the program was not finished`;
}

let shared: VmWorkerRunner | null = null;

/** The process-wide runner, created on first use. */
export function sharedRunner(): VmWorkerRunner {
  shared ??= new VmWorkerRunner();
  return shared;
}
