// The entry point of a VM worker thread (started by worker-runner.ts with a big native stack):
// runs each job it is sent and answers on its port. After posting an answer it bumps a shared
// counter and wakes a caller blocked in Atomics.wait, which is how runSync waits without an
// event loop.
import { workerData, type MessagePort } from "node:worker_threads";
import { runJob, type VmJob } from "./job.js";
import { markBigStack } from "./stack.js";
import type { VmOutcome } from "./result.js";

export interface WorkerRequest {
  id: number;
  job: VmJob;
}
export interface WorkerAnswer {
  id: number;
  outcome: VmOutcome;
}
export interface WorkerSetup {
  port: MessagePort;
  /** Int32Array over a SharedArrayBuffer: [0] counts answers posted. */
  answered: Int32Array;
}

markBigStack();
const { port, answered } = workerData as WorkerSetup;
port.on("message", (request: WorkerRequest) => {
  const answer: WorkerAnswer = { id: request.id, outcome: runJob(request.job) };
  port.postMessage(answer);
  Atomics.add(answered, 0, 1);
  Atomics.notify(answered, 0);
});
