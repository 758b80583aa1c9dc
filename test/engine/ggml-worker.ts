// Run in a worker thread by ggml-cpu-kernels.test.ts, as the server's decode worker runs the
// engine: loads llama.cpp there, and reports whether llama.cpp's exp kernel was bound in this
// thread and the entropy the statistics computed with it.
import { parentPort, workerData } from "node:worker_threads";
import { loadLlamaLibrary } from "../../src/engine/llama/library.js";
import { ggmlCpuKernels, ggmlCpuKernelsStatus } from "../../src/engine/llama/ggml-cpu-kernels.js";
import { LogitState } from "../../src/decode/logit-state.js";

const logits = workerData as Float32Array;
await loadLlamaLibrary("cpu");
const state = new LogitState(logits.length);
state.load(logits);
parentPort!.postMessage({
  bound: ggmlCpuKernels() !== undefined,
  status: ggmlCpuKernelsStatus(),
  entropy: state.entropy(),
  p7: state.probability(7),
});
