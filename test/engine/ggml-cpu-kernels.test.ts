// llama.cpp's exp kernel, borrowed from the ggml CPU library the engine loaded: found in this
// process, bound, and rejected by its self-check when declared with another signature (what a
// future ggml that changed it would look like through the pinned declaration).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Worker } from "node:worker_threads";
import koffi from "koffi";
import { LogitState } from "../../src/decode/logit-state.js";
import { loadLlamaLibrary } from "../../src/engine/llama/library.js";
import {
  checkSoftMax,
  ggmlCpuKernels,
  ggmlCpuKernelsStatus,
} from "../../src/engine/llama/ggml-cpu-kernels.js";

await loadLlamaLibrary("cpu");

test("loading llama.cpp binds ggml_vec_soft_max_f32 from the CPU variant this process mapped", () => {
  const kernels = ggmlCpuKernels();
  assert.ok(kernels, ggmlCpuKernelsStatus());
  assert.match(kernels.library, /libggml-cpu(-[\w-]+)?\.so$/);
  assert.ok(readFileSync("/proc/self/maps", "utf8").includes(kernels.library));
  const x = Float32Array.from({ length: 1001 }, (_, i) => Math.sin(i) * 30);
  const y = new Float32Array(x.length);
  const sum = kernels.softMax(x.length, y, x, 30);
  let want = 0;
  for (let i = 0; i < x.length; i++) {
    const e = Math.exp(Math.fround(x[i]! - 30));
    want += e;
    assert.ok(Math.abs(y[i]! - e) <= 1e-6 * e, `weight ${i}: ${y[i]} vs ${e}`);
  }
  assert.ok(Math.abs(sum - want) <= 1e-7 * want, `sum ${sum} vs ${want}`);
});

test("the self-check rejects the kernel declared with a float result or called with its arrays swapped", () => {
  const library = ggmlCpuKernels()!.library;
  const lib = koffi.load(library);
  const asDeclared = lib.func(
    "double ggml_vec_soft_max_f32(int n, float *y, const float *x, float max)",
  );
  assert.equal(checkSoftMax(asDeclared), undefined);
  const floatResult = lib.func(
    "float ggml_vec_soft_max_f32(int n, float *y, const float *x, float max)",
  );
  assert.match(checkSoftMax(floatResult) ?? "", /sum/);
  // A ggml whose kernel took (x, y) where this one takes (y, x).
  assert.match(checkSoftMax((n, y, x, max) => asDeclared(n, x, y, max)) ?? "", /gave|sum/);
});

test("a worker thread (the server's decode thread) binds the kernel too and gets the same statistics", async () => {
  const logits = Float32Array.from({ length: 151936 }, (_, i) => Math.sin(i * 0.37) * 4 + (i % 7));
  const state = new LogitState(logits.length);
  state.load(logits);
  const worker = new Worker(new URL("./ggml-worker.js", import.meta.url), { workerData: logits });
  const reply = await new Promise<{ bound: boolean; status: string; entropy: number; p7: number }>(
    (resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
    },
  );
  await worker.terminate();
  assert.ok(reply.bound, reply.status);
  // The same kernels on the same logits: the same bits.
  assert.equal(reply.entropy, state.entropy());
  assert.equal(reply.p7, state.probability(7));
});
