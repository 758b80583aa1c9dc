// Control vectors on stories260K: training (repeng's mean-diff and pca_diff), llama.cpp's GGUF
// format in both directions (read and written by ggml's own gguf code), application through
// llama.cpp's llama_set_adapter_cvec against our per-sequence graph-tap application, scale 0,
// and the sentiment shift a happy/sad vector produces.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openEngine, type LlamaEngine } from "../../src/engine/open.js";
import { packageRoot } from "../../src/paths.js";
import {
  parseVectorArgument,
  readControlVector,
  scaledDirections,
  writeControlVector,
  type ControlVector,
} from "../../src/steer/control-vector.js";
import { parseLayers, trainControlVector } from "../../src/steer/train.js";
import { readWithGgml, writeWithGgml } from "./ggml-gguf.js";
import { storiesModelPath } from "../engine/helpers.js";

const fixtures = join(packageRoot, "test", "fixtures", "steer");
const lines = (f: string) =>
  readFileSync(join(fixtures, f), "utf8")
    .split("\n")
    .filter((l) => l.trim());
export const HAPPY = lines("happy.txt");
export const SAD = lines("sad.txt");
/** The fixed prompt whose next word the tests look at. */
export const SENTIMENT_PROMPT = "Once upon a time, there was a little girl. She felt very";

const dir = mkdtempSync(join(tmpdir(), "ruffian-cvec-"));
// Two sequences: control vectors go through the graph tap, per sequence.
const tapEngine = await openEngine(storiesModelPath, { device: "cpu", sequences: 2 });
// One sequence: control vectors go through llama.cpp's own llama_set_adapter_cvec.
const nativeEngine = await openEngine(storiesModelPath, { device: "cpu", sequences: 1 });
let meanDiff: ControlVector;
before(() => {
  meanDiff = trainControlVector(tapEngine, HAPPY, SAD, {
    method: "mean-diff",
    layers: [1, 2, 3, 4],
  });
});
after(() => {
  tapEngine.dispose();
  nativeEngine.dispose();
  rmSync(dir, { recursive: true, force: true });
});

function logitsAfterPrompt(
  engine: LlamaEngine,
  vector: Map<number, Float32Array> | null,
  seq = 0,
  via: "auto" | "tap" = "auto",
): Float32Array {
  engine.truncate(seq, 0);
  engine.setControlVector(seq, vector, { via });
  engine.decode([{ seq, tokens: engine.tokenize(SENTIMENT_PROMPT, { addSpecial: true }) }]);
  const out = Float32Array.from(engine.logits(seq));
  engine.setControlVector(seq, null);
  return out;
}

function lastHidden(text: string, layer: number): Float32Array {
  const tokens = tapEngine.tokenize(text, { addSpecial: true });
  tapEngine.truncate(1, 0);
  tapEngine.observe({ hidden: true });
  tapEngine.decode([{ seq: 1, tokens }]);
  return Float32Array.from(tapEngine.hidden(1, layer, tokens.length - 1)!);
}

function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

/** Probability of a whole word (all its tokens) after the prompt, under a control vector. */
function wordProbability(
  engine: LlamaEngine,
  vector: Map<number, Float32Array> | null,
  word: string,
): number {
  const prompt = engine.tokenize(SENTIMENT_PROMPT, { addSpecial: true });
  // SentencePiece puts a lone space token before a leading-space word: drop it.
  const pieces = engine.tokenize(word).slice(1);
  engine.truncate(0, 0);
  engine.setControlVector(0, vector);
  engine.decode([{ seq: 0, tokens: prompt }]);
  let p = 1;
  for (const t of pieces) {
    const l = engine.logits(0);
    let max = -Infinity;
    for (const x of l) max = Math.max(max, x);
    let z = 0;
    for (const x of l) z += Math.exp(x - max);
    p *= Math.exp(l[t]! - max) / z;
    engine.decode([{ seq: 0, tokens: [t] }]);
  }
  engine.setControlVector(0, null);
  return p;
}

test("training: mean-diff gives one direction per layer; pca is unit length and signed", () => {
  assert.deepEqual([...meanDiff.directions.keys()], [1, 2, 3, 4]);
  for (const v of meanDiff.directions.values()) assert.equal(v.length, 64);
  const pca = trainControlVector(tapEngine, HAPPY, SAD, { method: "pca", layers: [2, 4] });
  for (const [layer, v] of pca.directions) {
    assert.ok(Math.abs(Math.hypot(...v) - 1) < 1e-5, `layer ${layer} has unit norm`);
    // The pairwise differences, read independently from the engine's recordings.
    const diffs = HAPPY.map((h, i) => {
      const a = lastHidden(h, layer);
      const b = lastHidden(SAD[i]!, layer);
      return a.map((x, d) => x - b[d]!);
    });
    const centre = diffs[0]!.map((_, d) => diffs.reduce((s, r) => s + r[d]!, 0) / diffs.length);
    const variance = (u: Float32Array) => {
      const n = Math.hypot(...u);
      return diffs.reduce(
        (s, r) => s + (r.reduce((t, x, d) => t + (x - centre[d]!) * u[d]!, 0) / n) ** 2,
        0,
      );
    };
    // The first principal component: no other direction has more variance.
    for (const u of [
      meanDiff.directions.get(layer)!,
      ...diffs,
      Float32Array.from({ length: 64 }, (_, i) => Math.sin(i)),
    ])
      assert.ok(variance(v) >= variance(u) * (1 - 1e-6), `layer ${layer}: PC1 maximises variance`);
    // repeng's sign rule: positives project above their pair more often than not.
    const above = diffs.filter((r) => r.reduce((t, x, d) => t + x * v[d]!, 0) > 0).length;
    assert.ok(above * 2 >= diffs.length, `layer ${layer}: ${above}/${diffs.length} pairs above`);
  }
  assert.deepEqual(parseLayers("1-3,4", 5), [1, 2, 3, 4]);
  assert.throws(() => parseLayers("0-2", 5), /layer 0 is outside 1\.\.4/);
  assert.throws(() => parseLayers("2-9", 5), /layer 5 is outside/);
  assert.throws(
    () => trainControlVector(tapEngine, HAPPY, SAD.slice(1), { method: "pca", layers: [1] }),
    /pairs examples line by line: 4 positive vs 3 negative/,
  );
});

test("our GGUF is read by ggml's own gguf parser as a llama.cpp control vector", () => {
  const path = join(dir, "ours.gguf");
  writeControlVector(path, meanDiff);
  const f = readWithGgml(
    path,
    ["general.architecture", "controlvector.model_hint"],
    ["controlvector.layer_count"],
  );
  assert.equal(f.strings["general.architecture"], "controlvector");
  assert.equal(f.strings["controlvector.model_hint"], "llama");
  assert.equal(f.u32["controlvector.layer_count"], 4);
  assert.deepEqual(
    [...f.tensors.keys()],
    ["direction.1", "direction.2", "direction.3", "direction.4"],
  );
  for (const [name, t] of f.tensors) {
    assert.equal(t.type, 0, `${name} is F32`);
    assert.deepEqual(t.data, meanDiff.directions.get(Number(name.split(".")[1])));
  }
  // And it reads back unchanged through our reader.
  const back = readControlVector(path);
  assert.deepEqual(back.directions, meanDiff.directions);
});

test("a vector written by ggml's gguf writer (as cvector-generator does) loads in ours", () => {
  const path = join(dir, "theirs.gguf");
  const dirs = new Map([
    [2, Float32Array.from({ length: 64 }, (_, i) => Math.sin(i) / 3)],
    [3, Float32Array.from({ length: 64 }, (_, i) => Math.cos(i) / 5)],
  ]);
  writeWithGgml(path, dirs, "llama");
  const cv = readControlVector(path);
  assert.equal(cv.nEmbd, 64);
  assert.equal(cv.modelHint, "llama");
  assert.deepEqual(cv.directions, dirs);
});

test("llama.cpp's llama_set_adapter_cvec gives the same logits as our graph-tap application", () => {
  // Load our file the way llama.cpp does: ggml's parser, data from layer 1 on.
  const path = join(dir, "applied.gguf");
  writeControlVector(path, meanDiff);
  const f = readWithGgml(path, [], []);
  const nLayer = nativeEngine.capabilities.nLayer;
  const data = new Float32Array(64 * (nLayer - 1));
  for (const [name, t] of f.tensors) data.set(t.data, (Number(name.split(".")[1]) - 1) * 64);
  const plain = logitsAfterPrompt(nativeEngine, null);
  nativeEngine.truncate(0, 0);
  nativeEngine.nativeControlVector(data, 1, nLayer - 1);
  nativeEngine.decode([
    { seq: 0, tokens: nativeEngine.tokenize(SENTIMENT_PROMPT, { addSpecial: true }) },
  ]);
  const theirs = Float32Array.from(nativeEngine.logits(0));
  nativeEngine.nativeControlVector(null);
  const ours = logitsAfterPrompt(tapEngine, scaledDirections(meanDiff, 1), 1, "tap");
  assert.ok(maxAbsDiff(plain, theirs) > 0.05, "the vector changes the logits");
  assert.ok(maxAbsDiff(theirs, ours) <= 1e-5, `max |Δ| ${maxAbsDiff(theirs, ours)}`);
  // setControlVector on a one-sequence context takes llama.cpp's path: same numbers again.
  const viaEngine = logitsAfterPrompt(nativeEngine, scaledDirections(meanDiff, 1));
  assert.ok(maxAbsDiff(theirs, viaEngine) <= 1e-6);
});

test("scale 0 is bit-identical to no vector, through both application paths", () => {
  for (const [engine, via] of [
    [tapEngine, "tap"],
    [nativeEngine, "auto"],
  ] as const) {
    const plain = logitsAfterPrompt(engine, null, 0, via);
    const zero = logitsAfterPrompt(engine, scaledDirections(meanDiff, 0), 0, via);
    assert.deepEqual(zero, plain);
  }
});

test("a vector changed at every step is rewritten in place: one install, the tap's logits", async () => {
  const schedule = [1, null, -1, 0.5, null, 1];
  const tokens = nativeEngine.tokenize(SENTIMENT_PROMPT + " happy and sad and", {
    addSpecial: true,
  });
  const prefix = tokens.length - schedule.length;
  const run = (engine: LlamaEngine, seq: number, via: "auto" | "tap") => {
    engine.truncate(seq, 0);
    engine.setControlVector(seq, null);
    engine.decode([{ seq, tokens: tokens.slice(0, prefix) }]);
    return schedule.map((scale, i) => {
      engine.setControlVector(seq, scale === null ? null : scaledDirections(meanDiff, scale), {
        via,
      });
      engine.decode([{ seq, tokens: [tokens[prefix + i]!] }]);
      return Float32Array.from(engine.logits(seq));
    });
  };
  const before = nativeEngine.controlVectorCounters();
  const inPlace = run(nativeEngine, 0, "auto");
  const after = nativeEngine.controlVectorCounters();
  // Both runs start from empty KV caches. llama.cpp's numbers depend on where in the cache a
  // sequence's cells land: with seq 0's cells left by the earlier tests, seq 1's logits moved
  // by 1.1e-3 on a CPU with AVX-512 (libggml-cpu-zen4) while a fresh engine and the in-place
  // path agreed exactly.
  tapEngine.truncate(0, 0);
  const tap = run(tapEngine, 1, "tap");
  nativeEngine.setControlVector(0, null);
  tapEngine.setControlVector(1, null);
  // Rounding differences of the two paths carry over through the KV cache from step to step
  // (1.3e-5 by the last step); the vector itself moves logits by more than 0.05.
  for (let i = 0; i < schedule.length; i++)
    assert.ok(
      maxAbsDiff(inPlace[i]!, tap[i]!) <= 1e-4,
      `step ${i}: ${maxAbsDiff(inPlace[i]!, tap[i]!)}`,
    );
  assert.ok(after.installs - before.installs <= 1, "llama.cpp's vector installed at most once");
  assert.ok(after.inPlaceWrites - before.inPlaceWrites >= 4, "later changes written in place");
  // Left in the graph with zeros, it is bit-identical to a context that never had a vector.
  const fresh = await openEngine(storiesModelPath, { device: "cpu", sequences: 1 });
  try {
    assert.deepEqual(logitsAfterPrompt(nativeEngine, null), logitsAfterPrompt(fresh, null));
  } finally {
    fresh.dispose();
  }
});

test("a happy/sad mean-diff vector raises P(happy)/P(sad) at least 3-fold at scale 1", () => {
  const ratio = (v: Map<number, Float32Array> | null) =>
    wordProbability(nativeEngine, v, " happy") / wordProbability(nativeEngine, v, " sad");
  const before = ratio(null);
  const happy = ratio(scaledDirections(meanDiff, 1));
  const sad = ratio(scaledDirections(meanDiff, -1));
  assert.ok(
    happy >= 3 * before,
    `ratio ${before.toFixed(3)} → ${happy.toFixed(3)} with the vector`,
  );
  assert.ok(sad <= before / 3, `ratio ${before.toFixed(3)} → ${sad.toFixed(3)} with scale -1`);
});

test("bad control-vector files and arguments are refused with the file named", () => {
  assert.deepEqual(parseVectorArgument("v.gguf:-0.5"), { path: "v.gguf", scale: -0.5 });
  assert.deepEqual(parseVectorArgument("dir:x/v.gguf"), { path: "dir:x/v.gguf", scale: 1 });
  assert.throws(
    () => readControlVector(storiesModelPath),
    /general\.architecture is 'llama', not 'controlvector'/,
  );
  assert.throws(
    () => readControlVector(join(fixtures, "happy.txt")),
    /happy\.txt: not a GGUF file/,
  );
  const zero = join(dir, "zero.gguf");
  writeWithGgml(zero, new Map([[0, new Float32Array(64)]]), "llama");
  assert.throws(() => readControlVector(zero), /direction\.0 is invalid/);
  assert.throws(
    () => tapEngine.setControlVector(0, new Map([[2, new Float32Array(10)]])),
    /has 10 values, the model's hidden size is 64/,
  );
});
