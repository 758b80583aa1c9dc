// Worker for native-kernels.test.ts: a fresh module instance that reads RUFFIAN_NATIVE_KERNELS
// from the environment the test gave it, and reports which kernels it has and the statistics
// it computes on the logits it was sent.
import { parentPort, workerData } from "node:worker_threads";
import { LogitState } from "../../src/decode/logit-state.js";
import { nativeKernels, nativeKernelsStatus } from "../../src/native/native-kernels.js";

const logits = workerData as Float32Array;
const state = new LogitState(logits.length);
state.load(logits);
parentPort!.postMessage({
  native: nativeKernels() !== undefined,
  status: nativeKernelsStatus(),
  entropy: state.entropy(),
  p7: state.probability(7),
});
