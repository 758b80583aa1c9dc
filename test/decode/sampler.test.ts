// Sampler and distribution helpers, checked against references computed here by full sort and
// direct formulas, plus a frequency test of the draws.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  Rng,
  Sampler,
  argmax,
  nucleus,
  selectLargest,
  type SamplerOptions,
} from "../../src/decode/sampler.js";
import { LogitState } from "../../src/decode/logit-state.js";
import { entropyNats } from "./reference.js";

/** Test-side generator (mulberry32), independent of the one under test. */
function testRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomLogits(n: number, seed: number, scale = 4): Float32Array {
  const r = testRandom(seed);
  return Float32Array.from({ length: n }, () => (r() - 0.5) * 2 * scale);
}

function softmax(logits: Float32Array, temperature = 1): number[] {
  const max = Math.max(...logits);
  const e = [...logits].map((v) => Math.exp((v - max) / temperature));
  const z = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / z);
}

function sortedIds(values: ArrayLike<number>): number[] {
  return Array.from({ length: values.length }, (_, i) => i).sort(
    (a, b) => values[b]! - values[a]! || a - b,
  );
}

/** Reference nucleus: the smallest most-probable prefix whose mass reaches p. */
function referenceNucleus(probs: number[], p: number): Set<number> {
  const order = sortedIds(probs);
  const kept = new Set<number>();
  let mass = 0;
  for (const id of order) {
    kept.add(id);
    mass += probs[id]!;
    if (mass >= p) break;
  }
  return kept;
}

function draws(
  sampler: Sampler,
  logits: Float32Array,
  count: number,
  history?: number[],
): number[] {
  return Array.from({ length: count }, () => sampler.sample(logits, history));
}

test("greedy picks the argmax, after bias and bans", () => {
  for (let seed = 1; seed <= 20; seed++) {
    const logits = randomLogits(1000, seed);
    const best = sortedIds(logits)[0]!;
    assert.equal(new Sampler(1000, { temperature: 0 }).sample(logits), best);
    assert.equal(argmax(logits), best);
    const second = sortedIds(logits)[1]!;
    assert.equal(
      new Sampler(1000, { temperature: 0, bannedTokens: new Set([best]) }).sample(logits),
      second,
    );
    const boosted = new Sampler(1000, { temperature: 0, logitBias: new Map([[17, 100]]) });
    assert.equal(boosted.sample(logits), 17);
  }
  // An infinite bias is a forced token, and NaN logits are never picked.
  const forced = new Sampler(1000, { logitBias: [[33, Infinity]], topP: 0.9, seed: 1 });
  assert.deepEqual(draws(forced, randomLogits(1000, 2), 5), [33, 33, 33, 33, 33]);
  const withNaN = new Float32Array([NaN, 1, NaN, 3, NaN]);
  assert.equal(new Sampler(5, { temperature: 0 }).sample(withNaN), 3);
  assert.ok([1, 3].includes(new Sampler(5, { seed: 4 }).sample(withNaN)));
  // Bias and bans can be changed between steps.
  const logits = randomLogits(50, 3);
  const s = new Sampler(50, { temperature: 0 });
  s.configure({ logitBias: [[9, 1e6]] });
  assert.equal(s.sample(logits), 9);
  s.configure({ logitBias: [], bannedTokens: [] });
  assert.equal(s.sample(logits), argmax(logits));
});

test("seeded sampling is reproducible; different seeds differ", () => {
  const logits = randomLogits(512, 7, 2);
  const a = draws(new Sampler(512, { seed: 42 }), logits, 300);
  const b = draws(new Sampler(512, { seed: 42 }), logits, 300);
  const c = draws(new Sampler(512, { seed: 43 }), logits, 300);
  assert.deepEqual(a, b);
  assert.notDeepEqual(a, c);
  // Reseeding restarts the sequence; saving the generator state resumes it.
  const s = new Sampler(512, { seed: 42 });
  draws(s, logits, 100);
  const state = s.rng.getState();
  const rest = draws(s, logits, 200);
  s.rng.setState(state);
  assert.deepEqual(draws(s, logits, 200), rest);
  s.configure({ seed: 42 });
  assert.deepEqual(draws(s, logits, 300), a);
  assert.throws(() => s.rng.setState([0, 0, 0, 0]), /not all zero/);
});

test("the generator is uniform on [0, 1)", () => {
  const rng = new Rng(5);
  const bins = new Array<number>(10).fill(0);
  const n = 100000;
  for (let i = 0; i < n; i++) {
    const x = rng.next();
    assert.ok(x >= 0 && x < 1);
    bins[Math.floor(x * 10)]!++;
  }
  for (const b of bins) assert.ok(Math.abs(b - n / 10) < 5 * Math.sqrt(n / 10), `bin ${b}`);
});

test("temperature towards 0 and top-k = 1 equal greedy", () => {
  for (let seed = 1; seed <= 30; seed++) {
    const logits = randomLogits(2000, seed);
    const best = argmax(logits);
    // A clear winner: float32 near-ties would make "towards 0" need an ever smaller temperature.
    logits[best]! += 0.05;
    const cold = new Sampler(2000, { temperature: 1e-4, seed });
    const top1 = new Sampler(2000, { temperature: 1.5, topK: 1, seed });
    for (let i = 0; i < 5; i++) {
      assert.equal(cold.sample(logits), best);
      assert.equal(top1.sample(logits), best);
    }
  }
});

test("top-k samples only the k most likely tokens, and all of them", () => {
  const logits = randomLogits(3000, 11, 1);
  const top = new Set(sortedIds(logits).slice(0, 5));
  const seen = new Set(draws(new Sampler(3000, { topK: 5, seed: 1 }), logits, 2000));
  assert.deepEqual([...seen].sort(), [...top].sort());
});

test("quickselect finds the k largest, ties included", () => {
  const r = testRandom(9);
  for (let trial = 0; trial < 200; trial++) {
    const n = 1 + Math.floor(r() * 300);
    const distinct = trial % 3 === 0 ? 3 : 1000;
    const key = Float32Array.from({ length: n }, () => Math.floor(r() * distinct));
    const k = 1 + Math.floor(r() * n);
    const index = Int32Array.from({ length: n }, (_, i) => i);
    selectLargest(index, n, k, key);
    const chosen = [...index.slice(0, k)].map((i) => key[i]!).sort((a, b) => b - a);
    const expected = [...key].sort((a, b) => b - a).slice(0, k);
    assert.deepEqual(chosen, expected, `trial ${trial}`);
    assert.deepEqual(
      [...index].sort((a, b) => a - b),
      Array.from({ length: n }, (_, i) => i),
    );
  }
});

test("top-p keeps the smallest set whose mass reaches p (reference: full sort)", () => {
  for (let seed = 1; seed <= 40; seed++) {
    const n = 50 + seed * 37;
    const logits = randomLogits(n, seed, 3);
    const probs = softmax(logits);
    for (const p of [0.1, 0.5, 0.9, 0.99]) {
      const reference = referenceNucleus(probs, p);
      const index = Int32Array.from({ length: n }, (_, i) => i);
      const weight = Float32Array.from(probs);
      const { count, mass } = nucleus(index, n, weight, p);
      assert.deepEqual(
        new Set(index.slice(0, count)),
        reference,
        `seed ${seed} p ${p}: ${count} vs ${reference.size}`,
      );
      assert.ok(Math.abs(mass - [...reference].reduce((a, id) => a + probs[id]!, 0)) < 1e-5);
    }
  }
  // Through the sampler: draws stay inside the nucleus.
  const logits = randomLogits(400, 5, 3);
  const allowed = referenceNucleus(softmax(logits), 0.6);
  const seen = new Set(draws(new Sampler(400, { topP: 0.6, seed: 3 }), logits, 3000));
  for (const id of seen) assert.ok(allowed.has(id), `token ${id} outside the nucleus`);
  assert.ok(seen.size > allowed.size / 2);
});

test("top-p after top-k works on the mass left by top-k", () => {
  const logits = randomLogits(2000, 13, 2);
  const top10 = sortedIds(logits).slice(0, 10);
  const renormalised = softmax(Float32Array.from(top10, (id) => logits[id]!));
  const allowed = new Set([...referenceNucleus(renormalised, 0.5)].map((j) => top10[j]!));
  const seen = new Set(draws(new Sampler(2000, { topK: 10, topP: 0.5, seed: 2 }), logits, 2000));
  assert.deepEqual([...seen].sort(), [...allowed].sort());
});

test("top-p on a flat distribution keeps the right number of tokens", () => {
  const n = 1000;
  const index = Int32Array.from({ length: n }, (_, i) => i);
  const weight = new Float32Array(n).fill(1);
  assert.equal(nucleus(index, n, weight, 0.9 * n).count, 900);
  assert.equal(nucleus(index, n, weight, 0).count, 1);
});

test("min-p drops tokens below minP × the top probability", () => {
  const logits = randomLogits(300, 21, 3);
  const probs = softmax(logits);
  const pmax = Math.max(...probs);
  const allowed = new Set(probs.flatMap((p, id) => (p >= 0.2 * pmax ? [id] : [])));
  const seen = new Set(draws(new Sampler(300, { minP: 0.2, seed: 8 }), logits, 3000));
  assert.deepEqual([...seen].sort(), [...allowed].sort());
});

test("repetition penalty changes the pick", () => {
  const logits = new Float32Array(10).fill(-5);
  logits[5] = 2.0;
  logits[7] = 1.8;
  const s = new Sampler(10, { temperature: 0, repetitionPenalty: 1.3, repetitionWindow: 4 });
  assert.equal(s.sample(logits), 5);
  assert.equal(s.sample(logits, [1, 5, 5, 2]), 7);
  // Outside the window the token is no longer penalised.
  assert.equal(s.sample(logits, [5, 1, 2, 3, 4]), 5);
  // Negative logits are pushed further down, not up.
  const neg = new Float32Array([-1, -1.2, -3]);
  const t = new Sampler(3, { temperature: 0, repetitionPenalty: 1.5 });
  assert.equal(t.sample(neg, [0]), 1);
  // The input logits are never modified.
  assert.equal(logits[5], 2.0);
});

test("sampled frequencies match the softmax probabilities", () => {
  const logits = new Float32Array([1.5, 0.2, -0.4, 2.1, 0.9, -2, 0, 1.1]);
  for (const temperature of [1, 0.7, 2]) {
    const expected = softmax(logits, temperature);
    const s = new Sampler(logits.length, { temperature, seed: 1234 });
    const n = 100000;
    const counts = new Array<number>(logits.length).fill(0);
    for (let i = 0; i < n; i++) counts[s.sample(logits)]!++;
    counts.forEach((c, id) => {
      const p = expected[id]!;
      const sigma = Math.sqrt((p * (1 - p)) / n);
      assert.ok(
        Math.abs(c / n - p) < 5 * sigma + 1e-4,
        `T=${temperature} token ${id}: ${c / n} vs ${p}`,
      );
    });
  }
});

test("top-p draws follow the softmax renormalised over the nucleus", () => {
  // Twelve tokens close together, and p within 1% of where a token's more likely tokens' mass
  // lies: the bounds alone cannot decide whether it is in, so the exact weights are computed.
  const logits = Float32Array.from({ length: 12 }, (_, i) => 1 - 0.15 * i + 0.05 * Math.sin(i));
  const order = sortedIds(logits);
  const cases: Array<[number, number]> = [[0.9, 0.7]];
  for (const temperature of [1, 0.7]) {
    const probs = softmax(logits, temperature);
    for (const edge of [3, 8]) {
      const above = order.slice(0, edge).reduce((a, id) => a + probs[id]!, 0);
      cases.push([above * 1.01, temperature], [above * 0.99, temperature]);
    }
  }
  for (const [p, temperature] of cases) {
    const probs = softmax(logits, temperature);
    const kept = referenceNucleus(probs, p);
    const mass = [...kept].reduce((a, id) => a + probs[id]!, 0);
    const s = new Sampler(logits.length, { temperature, topP: p, seed: 99 });
    const n = 40000;
    const counts = new Array<number>(logits.length).fill(0);
    for (let i = 0; i < n; i++) counts[s.sample(logits)]!++;
    counts.forEach((c, id) => {
      const want = kept.has(id) ? probs[id]! / mass : 0;
      const sigma = Math.sqrt((want * (1 - want)) / n);
      assert.ok(Math.abs(c / n - want) <= 5 * sigma, `p=${p} token ${id}: ${c / n} vs ${want}`);
    });
  }
});

test("entropy, probability and top-k of LogitState against direct computation", () => {
  for (let seed = 1; seed <= 10; seed++) {
    const logits = randomLogits(5000, seed, 5);
    const probs = softmax(logits);
    const direct = -probs.reduce((acc, p) => acc + (p > 0 ? p * Math.log(p) : 0), 0);
    const state = new LogitState(5000);
    state.load(logits);
    assert.ok(Math.abs(state.entropy() - direct) < 1e-6, `${state.entropy()} vs ${direct}`);
    assert.ok(Math.abs(entropyNats(logits) - direct) < 1e-9, "the test's own reference agrees");
    for (const id of [0, 17, 4999]) assert.ok(Math.abs(state.probability(id) - probs[id]!) < 1e-9);
    const order = sortedIds(logits).slice(0, 10);
    order.forEach((id, rank) => {
      assert.equal(state.topToken(rank), id);
      assert.ok(Math.abs(state.topProb(rank) - probs[id]!) < 1e-9);
    });
  }
  const uniform = new LogitState(64);
  uniform.load(new Float32Array(64));
  assert.ok(Math.abs(uniform.entropy() - Math.log(64)) < 1e-9);
  const oneHot = new Float32Array(8).fill(-Infinity);
  oneHot[3] = 0;
  const hot = new LogitState(8);
  hot.load(oneHot);
  assert.equal(hot.entropy(), 0);
  // Fewer tokens than ranks: only the finite ones rank. Ties keep the lower id first.
  const flat = new LogitState(6);
  flat.load(new Float32Array(6));
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5].map((r) => flat.topToken(r)),
    [0, 1, 2, 3, 4, 5],
  );
  assert.throws(() => flat.topToken(6), /outside 0..5/);
  assert.throws(() => flat.probability(6), /outside the vocabulary/);
});

test("drawing in a LogitState's buffers gives the draws of sampling a copy, logits untouched", () => {
  const modes: SamplerOptions[] = [
    { temperature: 0 },
    { temperature: 0.8 },
    { temperature: 0.8, topK: 40 },
    { temperature: 0.8, topP: 0.9 },
    { temperature: 0.8, minP: 0.05 },
    { temperature: 0.8, topK: 40, topP: 0.95, minP: 0.05 },
    { temperature: 0.8, topP: 0.95, minP: 0.05 },
    // Edited in place and undone: penalty, bias and bans (one token both biased and banned).
    { temperature: 0.8, repetitionPenalty: 1.3, repetitionWindow: 16 },
    { temperature: 0, repetitionPenalty: 1.3 },
    {
      temperature: 0.8,
      topP: 0.9,
      repetitionPenalty: 1.1,
      logitBias: [
        [5, 4],
        [6, -2],
      ],
    },
    {
      temperature: 0.7,
      topK: 20,
      logitBias: [[5, 3]],
      bannedTokens: [5, 9],
      repetitionPenalty: 1.2,
    },
  ];
  for (const vocab of [512, 32000]) {
    const state = new LogitState(vocab);
    for (const options of modes) {
      const copying = new Sampler(vocab, { ...options, seed: 11 });
      const sharing = new Sampler(vocab, { ...options, seed: 11 });
      for (let step = 0; step < 40; step++) {
        const logits = randomLogits(vocab, 1000 * step + vocab, 6);
        // Recent tokens: the most likely one and a few others, as a repetitive text has.
        const top = argmax(logits);
        const history = [3, 5, 9, 17, step % vocab, top, top];
        state.load(logits);
        // Half the steps after a statistics pass, whose block maxima the draw then reuses.
        const entropy = step % 2 === 1 ? state.entropy() : NaN;
        const expected = copying.sample(logits, history);
        const what = `${JSON.stringify(options)} step ${step}`;
        assert.equal(state.sampleWith(sharing, history), expected, what);
        assert.deepEqual(state.logits, logits, what);
        // What was computed on the logits before the draw still holds after it, and what is
        // computed after it sees the logits, not the edits.
        if (step % 2 === 1) assert.equal(state.entropy(), entropy, what);
        assert.equal(state.topToken(0), top, what);
      }
    }
  }
});

test("bad input is rejected with a clear message", () => {
  assert.throws(() => new Sampler(0), /vocabulary size/);
  const s = new Sampler(10);
  assert.throws(() => s.sample(new Float32Array(9)), /expected 10 logits, got 9/);
  assert.throws(
    () => s.configure({ bannedTokens: [10] }),
    /banned token 10 is outside the vocabulary 0..9/,
  );
  assert.throws(() => s.configure({ logitBias: [[-1, 2]] }), /biased token -1/);
  assert.throws(() => s.configure({ topP: 1.5 }), /topP must be within 0..1/);
  assert.throws(() => s.configure({ topK: -1 }), /topK/);
  assert.throws(() => s.configure({ repetitionPenalty: 0 }), /repetitionPenalty/);
  s.configure({ repetitionPenalty: 1.2 });
  assert.throws(() => s.sample(new Float32Array(10), [11]), /history token 11/);
  s.configure({ bannedTokens: Array.from({ length: 10 }, (_, i) => i) });
  assert.throws(() => s.sample(new Float32Array(10)), /every token is masked/);
  s.configure({ temperature: 0 });
  assert.throws(() => s.sample(new Float32Array(10)), /every token is masked/);
});
