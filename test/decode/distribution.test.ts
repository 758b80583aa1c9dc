// The distribution at real vocabulary sizes (up to Qwen's 151,936 tokens): entropy, probabilities,
// top-k, the nucleus and the edits that LogitState (and so every intrinsic) and the sampler
// compute with SIMD kernels, against float64 references over every token.
import { test } from "node:test";
import assert from "node:assert/strict";
import { LogitState, MASKED_LOGIT } from "../../src/decode/logit-state.js";
import { Rng, Sampler } from "../../src/decode/sampler.js";
import { entropyNats, nucleusByFullSort, softmax, sortedIds } from "./reference.js";
import { loadLlamaLibrary } from "../../src/engine/llama/library.js";
import {
  ggmlCpuKernels,
  setGgmlCpuKernelsEnabled,
} from "../../src/engine/llama/ggml-cpu-kernels.js";
import { nativeKernels, setNativeKernelsEnabled } from "../../src/native/native-kernels.js";

// The statistics use the project's own native kernels where they are built (src/native/),
// else llama.cpp's exp kernel (bound by loading llama.cpp), else WebAssembly: each exactness
// test runs on every one of those paths (native-kernels.test.ts checks that the native ones
// are bound wherever the build made them).
await loadLlamaLibrary("cpu");
const PATHS = [
  ...(nativeKernels() ? [["the native kernels", true, true] as const] : []),
  ["llama.cpp's exp kernel", false, true],
  ["WebAssembly", false, false],
] as const;

function onEachPath(run: (path: string) => void): void {
  assert.ok(ggmlCpuKernels(), "the ggml CPU kernels are bound on this Linux x64 machine");
  for (const [path, own, ggml] of PATHS) {
    setNativeKernelsEnabled(own);
    setGgmlCpuKernelsEnabled(ggml);
    try {
      run(path);
    } finally {
      setNativeKernelsEnabled(true);
      setGgmlCpuKernelsEnabled(true);
    }
  }
}

// 50,257 (GPT-2's) is no multiple of 16: the kernels' tails in TypeScript are checked too.
const VOCABS = [512, 32000, 50257, 151936];

/** Shapes of next-token distributions: a model-like body with strong candidates, a sharply
 * peaked one, a flat one, one with masked (−Infinity) entries, and one whose blocks lie at
 * tiers from 0 to 95 nats down and at the masked value. */
function shapes(vocab: number, seed: number): Array<[string, Float32Array]> {
  const rng = new Rng(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - rng.next())) * Math.cos(2 * Math.PI * rng.next());
  const body = Float32Array.from({ length: vocab }, () => 2 * gauss());
  for (let i = 0; i < 20; i++) body[rng.nextUint32() % vocab] = 8 + 4 * rng.next();
  const peaked = Float32Array.from({ length: vocab }, () => 6 * gauss() - 20);
  peaked[rng.nextUint32() % vocab] = 40;
  const flat = Float32Array.from({ length: vocab }, () => 0.01 * gauss());
  const masked = Float32Array.from(body);
  for (let i = 0; i < vocab; i += 3) masked[i] = -Infinity;
  // Whole blocks of 256 far apart: the statistics pass sums each block relative to its own
  // maximum and skips blocks 40 nats down, so every tier, on either side of that, must still
  // land on the float64 result.
  const tiers = [0, -9, -30, -39, -41, -60, -95, MASKED_LOGIT];
  const tiered = Float32Array.from(body, (x, i) => x + tiers[(i >> 8) % tiers.length]!);
  return [
    ["model-like", body],
    ["peaked", peaked],
    ["flat", flat],
    ["masked", masked],
    ["tiered blocks", tiered],
  ];
}

test("entropy, probabilities and top-64 match float64 references within 1e-6", () =>
  onEachPath((path) => {
    for (const vocab of VOCABS) {
      for (const [shape, logits] of shapes(vocab, vocab)) {
        const state = new LogitState(vocab);
        state.load(logits);
        const what = `${path}: ${shape} at ${vocab}`;
        const h = entropyNats(logits);
        assert.ok(
          Math.abs(state.entropy() - h) <= 1e-6,
          `${what}: entropy ${state.entropy()} vs ${h}`,
        );
        const probs = softmax(logits);
        const order = sortedIds(logits);
        for (let rank = 0; rank < 64; rank++) {
          const id = order[rank]!;
          if (!(logits[id]! > -Infinity)) break;
          assert.equal(state.topToken(rank), id, `${what}: rank ${rank}`);
          assert.ok(Math.abs(state.topProb(rank) - probs[id]!) <= 1e-6, `${what}: p at ${rank}`);
        }
        for (const id of [1, vocab >> 1, vocab - 1]) {
          const p = logits[id]! > -Infinity ? probs[id]! : 0;
          assert.ok(Math.abs(state.probability(id) - p) <= 1e-6, `${what}: p(${id})`);
        }
        assert.equal(state.argmax(), order[0]);
      }
    }
  }));

test("a NaN logit carries no weight on either path (llama.cpp's kernel hands it to WebAssembly)", () =>
  onEachPath((path) => {
    const vocab = 32000;
    const [, logits] = shapes(vocab, 9)[0]!;
    const withNaN = Float32Array.from(logits);
    const asMasked = Float32Array.from(logits);
    for (const id of [3, 4097, 31999]) {
      withNaN[id] = NaN;
      asMasked[id] = -Infinity;
    }
    const state = new LogitState(vocab);
    state.load(withNaN);
    const h = entropyNats(asMasked);
    assert.ok(Math.abs(state.entropy() - h) <= 1e-6, `${path}: entropy ${state.entropy()} vs ${h}`);
    const probs = softmax(asMasked);
    for (const id of [0, 4096, 31998])
      assert.ok(Math.abs(state.probability(id) - probs[id]!) <= 1e-6);
    assert.equal(state.argmax(), sortedIds(asMasked)[0]);
  }));

test("logit_top_p keeps exactly the full-sort nucleus at every vocabulary size", () =>
  onEachPath((path) => {
    for (const vocab of VOCABS) {
      for (const [shape, logits] of shapes(vocab, vocab + 1)) {
        if (shape === "masked") continue; // the reference's softmax has no −Infinity handling
        for (const p of [0.5, 0.9, 0.99]) {
          const state = new LogitState(vocab);
          state.load(logits);
          state.apply({ op: "top-p", p });
          const expected = nucleusByFullSort(logits, p);
          let kept = 0;
          for (let id = 0; id < vocab; id++) {
            const inside = state.logits[id] !== MASKED_LOGIT;
            if (inside) kept++;
            if (inside !== expected.has(id))
              assert.fail(
                `${path}: ${shape} at ${vocab}, p=${p}: token ${id} ${inside ? "kept" : "masked"}`,
              );
          }
          assert.equal(kept, expected.size);
        }
      }
    }
  }));

/** The ids whose logit is not MASKED_LOGIT, checked against the full-sort nucleus. */
function assertNucleus(state: LogitState, logits: Float32Array, p: number, what: string): void {
  const expected = nucleusByFullSort(logits, p);
  let kept = 0;
  for (let id = 0; id < logits.length; id++) {
    const inside = state.logits[id] !== MASKED_LOGIT;
    if (inside) kept++;
    if (inside !== expected.has(id))
      assert.fail(`${what}: token ${id} ${inside ? "kept" : "masked"}`);
  }
  assert.equal(kept, expected.size, what);
}

test("logit_top_p after the statistics (their weights reused) keeps exactly the full-sort nucleus, and after edits and draws that made those weights stale", () =>
  onEachPath((path) => {
    for (const vocab of [32000, 151936]) {
      for (const [shape, logits] of shapes(vocab, vocab + 5)) {
        if (shape === "masked") continue; // the reference's softmax has no −Infinity handling
        const state = new LogitState(vocab);
        for (const p of [0.5, 0.9]) {
          state.load(logits);
          assert.ok(Number.isFinite(state.entropy()));
          state.apply({ op: "top-p", p });
          assertNucleus(state, logits, p, `${path}: ${shape} at ${vocab}, p=${p} after entropy`);
        }
        // Statistics, then an edit: the weights belong to the logits before it.
        state.load(logits);
        state.entropy();
        state.apply({ op: "temperature", t: 0.5 });
        const tempered = Float32Array.from(state.logits);
        state.apply({ op: "top-p", p: 0.9 });
        assertNucleus(state, tempered, 0.9, `${path}: ${shape} at ${vocab} after temperature`);
        // Statistics, then a draw with a repetition penalty (applied and undone in place).
        state.load(logits);
        state.entropy();
        const sampler = new Sampler(vocab, { temperature: 0.8, repetitionPenalty: 1.3, seed: 3 });
        state.sampleWith(sampler, [1, 2, 3, 4097]);
        state.apply({ op: "top-p", p: 0.9 });
        assertNucleus(state, logits, 0.9, `${path}: ${shape} at ${vocab} after a draw`);
      }
    }
  }));

test("edits, snapshots and diffs equal the plain per-token formulas", () => {
  for (const vocab of [151936, 50257]) editsAt(vocab);
});

function editsAt(vocab: number): void {
  const [, logits] = shapes(vocab, 3)[0]!;
  const state = new LogitState(vocab);
  state.load(logits);
  state.takeSnapshot(2);
  state.apply({ op: "temperature", t: 0.7 });
  for (let i = 0; i < vocab; i += 997) assert.equal(state.logits[i], Math.fround(logits[i]! / 0.7));
  let diff = 0;
  for (let i = 0; i < vocab; i++) diff += Math.abs(Math.fround(logits[i]! / 0.7) - logits[i]!);
  assert.ok(Math.abs(state.diff(2) - diff) <= 1e-6 * diff);
  state.apply({ op: "restore", slot: 2 });
  assert.equal(state.diff(2), 0);
  state.apply({ op: "mask-below", threshold: 1.2345 });
  for (let i = 0; i < vocab; i++) {
    const want = logits[i]! < 1.2345 ? MASKED_LOGIT : logits[i]!;
    if (state.logits[i] !== want) assert.fail(`mask-below at ${vocab}: ${i}`);
  }
}

test("snapshots of several slots keep their own logits, whichever slot was taken or diffed last", () => {
  const vocab = 32000;
  const [, logits] = shapes(vocab, 4)[0]!;
  const state = new LogitState(vocab);
  const sumAbsDiff = (a: ArrayLike<number>, b: ArrayLike<number>) => {
    let d = 0;
    for (let i = 0; i < vocab; i++) d += Math.abs(a[i]! - b[i]!);
    return d;
  };
  const close = (got: number, want: number, what: string) =>
    assert.ok(Math.abs(got - want) <= 1e-6 * Math.max(1, want), `${what}: ${got} vs ${want}`);
  state.load(logits);
  state.takeSnapshot(0);
  const at0 = Float32Array.from(state.logits);
  state.apply({ op: "temperature", t: 0.5 });
  state.takeSnapshot(1);
  const at1 = Float32Array.from(state.logits);
  state.apply({ op: "mask-below", threshold: 0 });
  state.takeSnapshot(2);
  const at2 = Float32Array.from(state.logits);
  state.apply({ op: "set", id: 5, value: 42 });
  const now = Float32Array.from(state.logits);
  // Diff slots in an order that moves each one in and out of the kernels' scratch.
  close(state.diff(0), sumAbsDiff(now, at0), "diff 0");
  close(state.diff(2), sumAbsDiff(now, at2), "diff 2");
  close(state.diff(1), sumAbsDiff(now, at1), "diff 1");
  close(state.diff(0), sumAbsDiff(now, at0), "diff 0 again");
  state.apply({ op: "restore", slot: 1 });
  assert.deepEqual(state.logits, at1);
  state.apply({ op: "restore", slot: 2 });
  assert.deepEqual(state.logits, at2);
  state.takeSnapshot(2); // retaken while another slot holds the scratch
  state.apply({ op: "restore", slot: 0 });
  assert.deepEqual(state.logits, at0);
  assert.equal(state.diff(0), 0);
  close(state.diff(2), sumAbsDiff(at0, at2), "diff 2 after restoring 0");
  // Snapshots survive a new step's logits.
  state.load(at1);
  assert.equal(state.diff(1), 0);
  state.apply({ op: "restore", slot: 2 });
  assert.deepEqual(state.logits, at2);
  assert.throws(() => state.diff(3), /slot 3 is empty/);
});

test("at 151,936 tokens the sampler stays inside the nucleus, honours top-k and min-p, and is seeded", () => {
  const vocab = 151936;
  const [, logits] = shapes(vocab, 5)[0]!;
  const scaled = Float32Array.from(logits, (x) => x / 0.8);
  const nucleus = nucleusByFullSort(scaled, 0.9);
  const top40 = new Set(sortedIds(logits).slice(0, 40));
  const probs = softmax(scaled);
  const top = probs.reduce((a, b) => Math.max(a, b), 0);
  const modes = [
    { options: { topP: 0.9 }, allowed: (id: number) => nucleus.has(id) },
    { options: { topK: 40 }, allowed: (id: number) => top40.has(id) },
    { options: { minP: 0.05 }, allowed: (id: number) => probs[id]! >= 0.05 * top * (1 - 1e-6) },
    {
      options: { topP: 0.9, minP: 0.05 },
      allowed: (id: number) => nucleus.has(id) && probs[id]! >= 0.05 * top * (1 - 1e-6),
    },
    { options: {}, allowed: (id: number) => id >= 0 && id < vocab },
  ];
  for (const { options, allowed } of modes) {
    const a = new Sampler(vocab, { temperature: 0.8, seed: 11, ...options });
    const b = new Sampler(vocab, { temperature: 0.8, seed: 11, ...options });
    const drawsA = Array.from({ length: 200 }, () => a.sample(logits));
    const drawsB = Array.from({ length: 200 }, () => b.sample(logits));
    assert.deepEqual(drawsA, drawsB, `seeded ${JSON.stringify(options)}`);
    for (const id of drawsA) assert.ok(allowed(id), `${JSON.stringify(options)} drew ${id}`);
    assert.ok(new Set(drawsA).size > 1, `${JSON.stringify(options)} draws vary`);
  }
});
