// The project's own native vocabulary kernels (src/native/): built by `npm run build` wherever
// there is a C compiler, bound for this CPU, checked at bind time, used by the statistics
// (with the copy of the logits fused into their pass), and the fallbacks when they are
// switched off. Exactness on every path is distribution.test.ts's.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { Worker } from "node:worker_threads";
import { LogitState } from "../../src/decode/logit-state.js";
import { Rng } from "../../src/decode/sampler.js";
import {
  checkBlockStats,
  checkMassAbove,
  checkMaskCollect,
  nativeKernels,
  nativeKernelsStatus,
  nativeLibraryFor,
  setNativeKernelsEnabled,
  type NativeVocabKernels,
} from "../../src/native/native-kernels.js";
import { checkSoftMax } from "../../src/engine/llama/ggml-cpu-kernels.js";
import { entropyNats, softmax } from "./reference.js";

// These tests are about the native kernels: on, even where RUFFIAN_NATIVE_KERNELS=0 set the
// default off (the last test checks that setting, in a worker).
setNativeKernelsEnabled(true);

const compiler = spawnSync(process.env.CC || "cc", ["--version"]).status === 0;

function modelLike(vocab: number, seed: number): Float32Array {
  const rng = new Rng(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - rng.next())) * Math.cos(2 * Math.PI * rng.next());
  const logits = Float32Array.from({ length: vocab }, () => 2 * gauss());
  for (let i = 0; i < 20; i++) logits[rng.nextUint32() % vocab] = 8 + 4 * rng.next();
  return logits;
}

/**
 * The bound kernels, or undefined where this machine cannot have them: no C compiler at build
 * (CI and developers' machines have one, and there the kernels must be bound), or a CPU
 * without a build (then the status says why). Tests of the kernels themselves return there;
 * the tests of LogitState's behaviour run on whichever path this process has.
 */
function bound(): NativeVocabKernels | undefined {
  const kernels = nativeKernels();
  if (kernels) return kernels;
  const plan = nativeLibraryFor();
  if ("none" in plan) assert.match(nativeKernelsStatus(), /^no native vocabulary kernels \(/);
  else {
    assert.ok(!compiler, `a C compiler is here, yet: ${nativeKernelsStatus()}`);
    assert.match(nativeKernelsStatus(), /is not built/);
  }
  return undefined;
}

test("the build made the native kernels for this CPU wherever there is a C compiler, and they are bound", () => {
  const plan = nativeLibraryFor();
  if ("none" in plan) {
    assert.match(nativeKernelsStatus(), /^no native vocabulary kernels \(/);
    return;
  }
  if (compiler) assert.ok(existsSync(plan.library), `${plan.library} was not built`);
  if (!existsSync(plan.library)) {
    assert.match(nativeKernelsStatus(), /is not built/);
    return;
  }
  const kernels = bound()!;
  assert.equal(kernels.library, plan.library);
  assert.match(
    nativeKernelsStatus(),
    new RegExp(`^native vocabulary kernels \\(${plan.variant}\\) from .*libruffian-vocab-`),
  );
});

test("the self-checks pass the kernels as built and catch ones that compute something else", () => {
  const kernels = bound();
  if (!kernels) return;
  const { blockStats, softMax, massAbove, maskCollect, variant } = kernels;
  assert.equal(checkBlockStats(blockStats), undefined);
  assert.equal(checkSoftMax(softMax), undefined);
  assert.equal(checkMassAbove(massAbove), undefined);
  assert.equal(maskCollect !== undefined, variant === "avx512");
  if (maskCollect) {
    assert.equal(checkMaskCollect(maskCollect), undefined);
    // The upper bound taken as inclusive: a token at `to` listed.
    assert.match(
      checkMaskCollect((x, w, n, from, to, ...rest) =>
        maskCollect(x, w, n, from, to + 1e-3, ...rest),
      ) ?? "",
      /listed/,
    );
  }
  // Strictly above where it should be at or above.
  assert.match(
    checkMassAbove((x, w, n, threshold) => massAbove(x, w, n, threshold + 1e-3)) ?? "",
    /mass above/,
  );
  // One float short: the copy misses the last logit.
  assert.match(
    checkBlockStats((src, dst, n, blocks, maxima, sums) =>
      blockStats(src, dst, n - 1, blocks, maxima, sums),
    ) ?? "",
    /copy differs/,
  );
  // Sums of another block, or none.
  assert.match(
    checkBlockStats((src, dst, n, blocks, maxima, sums) => {
      const max = blockStats(src, dst, n, blocks, maxima, sums);
      sums.copyWithin(0, 2);
      return max;
    }) ?? "",
    /sums/,
  );
  // An exponential shifted the other way.
  assert.match(checkSoftMax((n, y, x, shift) => softMax(n, y, x, -shift)) ?? "", /gave|sum/);
});

test("the statistics (native where built) copy a pending load in their own pass: the logits are the source's, and later changes to the source are not seen", () => {
  bound();
  const vocab = 151936;
  const source = modelLike(vocab, 3);
  const kept = Float32Array.from(source);
  const state = new LogitState(vocab);
  state.load(modelLike(vocab, 4)); // replaced before anything read it
  state.load(source);
  const h = entropyNats(kept);
  assert.ok(Math.abs(state.entropy() - h) <= 1e-6, `entropy ${state.entropy()} vs ${h}`);
  source.fill(0); // what the engine's buffer does at the next decode
  assert.deepEqual(state.logits, kept);
  const probs = softmax(kept);
  assert.ok(Math.abs(state.probability(7) - probs[7]!) <= 1e-6);
  // A read before the statistics copies the logits first; an edit then counts.
  const again = Float32Array.from(kept);
  state.load(again);
  assert.equal(state.get(11), kept[11]);
  state.apply({ op: "set", id: 11, value: 30 });
  again[12] = 99; // after the copy: not seen
  const edited = Float32Array.from(kept);
  edited[11] = 30;
  const h2 = entropyNats(edited);
  assert.ok(Math.abs(state.entropy() - h2) <= 1e-6, `entropy ${state.entropy()} vs ${h2}`);
  assert.equal(state.argmax(), 11);
});

test("the statistics (native where built) keep the special cases: one-hot entropy exactly 0, NaN weightless, all masked, +Infinity", () => {
  bound();
  const vocab = 32000;
  const state = new LogitState(vocab);
  const oneHot = new Float32Array(vocab).fill(-Infinity);
  oneHot[777] = 5;
  state.load(oneHot);
  assert.equal(state.entropy(), 0);
  assert.equal(state.probability(777), 1);
  const far = new Float32Array(vocab).fill(-200); // every other token 205 nats down
  far[5] = 5;
  state.load(far);
  assert.equal(state.entropy(), 0);
  const withNaN = modelLike(vocab, 5);
  const asMasked = Float32Array.from(withNaN);
  for (const id of [0, 255, 256, 31999]) {
    withNaN[id] = NaN;
    asMasked[id] = -Infinity;
  }
  state.load(withNaN);
  const h = entropyNats(asMasked);
  assert.ok(Math.abs(state.entropy() - h) <= 1e-6, `entropy ${state.entropy()} vs ${h}`);
  state.load(new Float32Array(vocab).fill(-Infinity));
  assert.ok(Number.isNaN(state.entropy()));
  assert.equal(state.argmax(), -1);
  const infinite = modelLike(vocab, 6);
  infinite[300] = Infinity;
  state.load(infinite);
  assert.equal(state.entropy(), 0);
  assert.equal(state.argmax(), 300);
});

test("the native exp kernel gives NaN no weight, 0 far down, +Infinity far up, float64's values between", () => {
  const softMax = bound()?.softMax;
  if (!softMax) return;
  const x = Float32Array.from({ length: 1003 }, (_, i) => 10 - i * 0.1); // down to 90 nats below 10
  x[4] = NaN;
  x[6] = -Infinity;
  const y = new Float32Array(x.length);
  let want = 0;
  for (let i = 0; i < x.length; i++) {
    const d = Math.fround(x[i]! - 10);
    if (d > -87) want += Math.exp(d);
  }
  const sum = softMax(x.length, y, x, 10);
  assert.ok(Math.abs(sum - want) <= 1e-6 * want, `sum ${sum} vs ${want}`);
  assert.equal(y[4], 0);
  assert.equal(y[6], 0);
  assert.equal(y[1002], 0); // 90.2 nats down
  for (let i = 0; i < 860; i++)
    if (i !== 4 && i !== 6)
      assert.ok(Math.abs(y[i]! - Math.exp(Math.fround(x[i]! - 10))) <= 2e-7 * y[i]!, `y[${i}]`);
  const up = new Float32Array([0, 80, 87.9, 88.5, 100]);
  assert.equal(softMax(5, y, up, 0), Infinity);
  for (const i of [1, 2]) assert.ok(Math.abs(y[i]! - Math.exp(up[i]!)) <= 2e-7 * y[i]!, `y[${i}]`);
  assert.equal(y[3], Infinity);
  assert.equal(y[4], Infinity);
});

/** Runs native-worker.ts on `logits` with the environment `env`; its reply. */
async function inWorker(logits: Float32Array, env: NodeJS.ProcessEnv) {
  const worker = new Worker(new URL("./native-worker.js", import.meta.url), {
    workerData: logits,
    env,
  });
  try {
    return await new Promise<{ native: boolean; status: string; entropy: number; p7: number }>(
      (resolve, reject) => {
        worker.once("message", resolve);
        worker.once("error", reject);
      },
    );
  } finally {
    await worker.terminate();
  }
}

test("a worker thread (the server's decode thread) binds the native kernels too and gets the same statistics", async () => {
  const kernels = bound();
  const logits = modelLike(151936, 9);
  // The same build as here (RUFFIAN_NATIVE_KERNELS may name one), switched on.
  const env = { ...process.env };
  if (env.RUFFIAN_NATIVE_KERNELS === "0") delete env.RUFFIAN_NATIVE_KERNELS;
  const reply = await inWorker(logits, env);
  assert.equal(reply.native, kernels !== undefined, reply.status);
  const state = new LogitState(logits.length);
  state.load(logits);
  // The same kernel on the same logits: the same bits.
  assert.equal(reply.entropy, state.entropy());
  assert.equal(reply.p7, state.probability(7));
});

test("switched off (RUFFIAN_NATIVE_KERNELS=0, or the setter), the statistics fall back and stay exact", async () => {
  const logits = modelLike(151936, 8);
  const h = entropyNats(logits);
  const p7 = softmax(logits)[7]!;
  const reply = await inWorker(logits, { ...process.env, RUFFIAN_NATIVE_KERNELS: "0" });
  assert.equal(reply.native, false, reply.status);
  assert.ok(Math.abs(reply.entropy - h) <= 1e-6, `entropy ${reply.entropy} vs ${h}`);
  assert.ok(Math.abs(reply.p7 - p7) <= 1e-6);
  setNativeKernelsEnabled(false);
  try {
    assert.equal(nativeKernels(), undefined);
    const state = new LogitState(logits.length);
    state.load(logits);
    assert.ok(Math.abs(state.entropy() - h) <= 1e-6);
  } finally {
    setNativeKernelsEnabled(true);
  }
});

test("a forced build this CPU has no build of is refused with the reason, and the statistics stay exact", async () => {
  // On x86-64 there is no "baseline" build (and one for features the CPU lacks would stop the
  // process at its first instruction): the setting names the problem and nothing is bound.
  const logits = modelLike(32000, 5);
  const reply = await inWorker(logits, { ...process.env, RUFFIAN_NATIVE_KERNELS: "baseline" });
  if (process.arch === "x64") {
    assert.equal(reply.native, false, reply.status);
    assert.match(reply.status, /RUFFIAN_NATIVE_KERNELS=baseline: there is no such x86-64 build/);
  }
  assert.ok(Math.abs(reply.entropy - entropyNats(logits)) <= 1e-6);
});
