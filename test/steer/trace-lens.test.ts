// Hook-point names, `ruffian trace` (safetensors) and the logit lens, checked against the
// engine's own recordings and logits on stories260K.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openEngine } from "../../src/engine/open.js";
import { packageRoot } from "../../src/paths.js";
import { expandHookPoints, HOOK_POINTS, parseHookPoint } from "../../src/steer/hook-points.js";
import { readSafetensors } from "../../src/steer/safetensors.js";
import { lensLogits, loadUnembedding } from "../../src/steer/lens.js";
import { STORY_PROMPT, storiesModelPath } from "../engine/helpers.js";

const bin = join(packageRoot, "bin", "ruffian.js");
const dir = mkdtempSync(join(tmpdir(), "ruffian-trace-"));
const engine = await openEngine(storiesModelPath, { device: "cpu" });
after(() => {
  engine.dispose();
  rmSync(dir, { recursive: true, force: true });
});

function ruffian(...args: string[]) {
  const r = spawnSync(process.execPath, [bin, ...args], { encoding: "utf8", cwd: dir });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Decodes the story prompt with every recording on; returns its tokens. */
function recordPrompt(): number[] {
  const tokens = engine.tokenize(STORY_PROMPT, { addSpecial: true });
  engine.truncate(0, 0);
  engine.observe({ hidden: true, attention: true, kv: true, finalNorm: true });
  engine.decode([{ seq: 0, tokens }]);
  return tokens;
}

test("hook-point names resolve, expand and fail clearly", () => {
  const caps = { nLayer: 5 };
  assert.deepEqual(
    expandHookPoints("blocks.*.hook_resid_post", caps).map((h) => h.name),
    [0, 1, 2, 3, 4].map((l) => `blocks.${l}.hook_resid_post`),
  );
  assert.deepEqual(
    expandHookPoints("blocks.2.attn.*,logits", caps).map((h) => h.name),
    [
      "blocks.2.attn.hook_pattern",
      "blocks.2.attn.hook_k",
      "blocks.2.attn.hook_rot_k",
      "blocks.2.attn.hook_v",
      "logits",
    ],
  );
  assert.equal(parseHookPoint("ln_final.hook_normalized", 5).kind, "normalized");
  assert.throws(() => parseHookPoint("blocks.7.hook_resid_post", 5), /layer 7 is outside 0\.\.4/);
  assert.throws(
    () => parseHookPoint("blocks.1.hook_mlp_out", 5),
    /unknown hook point 'blocks\.1\.hook_mlp_out'/,
  );
  assert.throws(() => expandHookPoints("blocks.*.nothing", caps), /matches no hook point/);
});

test("docs/steering.md's table lists every hook point with its llama.cpp node", () => {
  const doc = readFileSync(join(packageRoot, "docs", "steering.md"), "utf8");
  for (const spec of HOOK_POINTS) {
    const row = doc.split("\n").find((l) => l.startsWith(`| \`${spec.pattern}\``));
    assert.ok(row, `row for ${spec.pattern}`);
    assert.ok(
      row.includes(spec.node.split(" ")[0]!.replace("{L}", "")),
      `${spec.pattern} → ${spec.node}`,
    );
  }
});

test("ruffian trace writes a safetensors file whose tensors equal the engine's recordings", () => {
  const out = join(dir, "run.safetensors");
  const hooks =
    "blocks.*.hook_resid_post,blocks.1.attn.hook_pattern,blocks.2.attn.hook_k," +
    "blocks.2.attn.hook_rot_k," +
    "blocks.2.attn.hook_v,ln_final.hook_normalized,logits";
  const r = ruffian("trace", "-p", STORY_PROMPT, "--hooks", hooks, "--out", out);
  assert.equal(r.code, 0, r.stderr);
  // The layout Python's safetensors expects: u64 header size, JSON, 8-byte aligned contiguous data.
  const bytes = readFileSync(out);
  const headerLength = Number(bytes.readBigUInt64LE(0));
  assert.equal(headerLength % 8, 0);
  const header = JSON.parse(bytes.toString("utf8", 8, 8 + headerLength));
  assert.ok("blocks.0.hook_resid_post" in header);
  let end = 0;
  for (const [name, e] of Object.entries(header) as [string, any][]) {
    if (name === "__metadata__") continue;
    assert.equal(e.dtype, "F32");
    assert.equal(e.data_offsets[0], end, `${name} follows the previous tensor`);
    end = e.data_offsets[1];
  }
  assert.equal(8 + headerLength + end, statSync(out).size);

  const file = readSafetensors(out);
  const tokens = recordPrompt();
  assert.deepEqual(JSON.parse(file.metadata.tokens!), tokens);
  assert.equal(file.metadata.model, storiesModelPath);
  assert.equal(file.metadata["model.architecture"], "llama");
  const n = tokens.length;
  const { nEmbd, nHead, nHeadKv, headDim, nVocab } = engine.capabilities;
  for (let l = 0; l < 5; l++) {
    const t = file.tensors.get(`blocks.${l}.hook_resid_post`)!;
    assert.deepEqual(t.shape, [n, nEmbd]);
    for (let p = 0; p < n; p++)
      assert.deepEqual(t.data.subarray(p * nEmbd, (p + 1) * nEmbd), engine.hidden(0, l, p));
  }
  const pattern = file.tensors.get("blocks.1.attn.hook_pattern")!;
  assert.deepEqual(pattern.shape, [nHead, n, n]);
  for (let h = 0; h < nHead; h++)
    for (let q = 0; q < n; q++) {
      const row = pattern.data.subarray((h * n + q) * n, (h * n + q + 1) * n);
      assert.deepEqual(row.subarray(0, q + 1), engine.attention(0, 1, h, q));
      assert.ok(
        row.subarray(q + 1).every((x) => x === 0),
        "no attention to the future",
      );
    }
  for (const [name, kind] of [
    ["blocks.2.attn.hook_k", "k_pre_rope"],
    ["blocks.2.attn.hook_rot_k", "k"],
    ["blocks.2.attn.hook_v", "v"],
  ] as const) {
    const t = file.tensors.get(name)!;
    assert.deepEqual(t.shape, [n, nHeadKv, headDim]);
    for (let p = 0; p < n; p++)
      for (let h = 0; h < nHeadKv; h++) {
        const at = (p * nHeadKv + h) * headDim;
        assert.deepEqual(t.data.subarray(at, at + headDim), engine.kv(0, 2, h, p, kind));
      }
  }
  const norm = file.tensors.get("ln_final.hook_normalized")!;
  for (let p = 0; p < n; p++)
    assert.deepEqual(norm.data.subarray(p * nEmbd, (p + 1) * nEmbd), engine.finalNorm(0, p));
  const logits = file.tensors.get("logits")!;
  assert.deepEqual(logits.shape, [n, nVocab]);
  assert.deepEqual(logits.data.subarray((n - 1) * nVocab), engine.logits(0));
});

/** llama.cpp's RoPE for llama models (adjacent pairs rotated by pos × base^(-2i/nRot)). */
function rope(k: Float32Array, pos: number, base: number, nRot: number): Float64Array {
  const out = Float64Array.from(k);
  for (let i = 0; i < nRot; i += 2) {
    const theta = pos * Math.pow(base, -i / nRot);
    const [x, y] = [k[i]!, k[i + 1]!];
    out[i] = x * Math.cos(theta) - y * Math.sin(theta);
    out[i + 1] = x * Math.sin(theta) + y * Math.cos(theta);
  }
  return out;
}

test("blocks.L.attn.hook_k holds the keys before RoPE: rotating them gives hook_rot_k", () => {
  // The prompt's decode and then single tokens: the graph is split differently in the two.
  const prompt = recordPrompt();
  for (const t of engine.tokenize(" a little dog", { addSpecial: false }))
    engine.decode([{ seq: 0, tokens: [t] }]);
  const { nLayer, nHeadKv, headDim } = engine.capabilities;
  const base = Number(engine.metadata("llama.rope.freq_base") ?? 10000);
  const nRot = Number(engine.metadata("llama.rope.dimension_count") ?? headDim);
  let differing = 0;
  for (let l = 0; l < nLayer; l++)
    for (let pos = 0; pos < engine.length(0); pos++)
      for (let h = 0; h < nHeadKv; h++) {
        const before = engine.kv(0, l, h, pos, "k_pre_rope");
        const after = engine.kv(0, l, h, pos, "k")!;
        assert.ok(before, `layer ${l} position ${pos} head ${h} recorded`);
        if (pos === 0) assert.deepEqual(before, after, "RoPE at position 0 is the identity");
        const rotated = rope(before, pos, base, nRot);
        for (let d = 0; d < headDim; d++)
          assert.ok(Math.abs(rotated[d]! - after[d]!) <= 1e-4, `l${l} p${pos} h${h} d${d}`);
        if (before.some((x, d) => Math.abs(x - after[d]!) > 1e-3)) differing++;
      }
  assert.ok(engine.length(0) > prompt.length);
  assert.ok(differing > nLayer * nHeadKv, "keys after position 0 are really rotated");
});

test("the logit lens at the last layer equals the model's real logits", () => {
  const tokens = recordPrompt();
  const u = loadUnembedding(engine);
  const real = engine.logits(0);
  const lens = lensLogits(u, engine.hidden(0, 4, tokens.length - 1)!);
  let worst = 0;
  for (let i = 0; i < real.length; i++) worst = Math.max(worst, Math.abs(lens[i]! - real[i]!));
  assert.ok(worst < 1e-4, `max |lens − logits| = ${worst}`);
  // Earlier layers give a different distribution (the lens is not reading the logits).
  const early = lensLogits(u, engine.hidden(0, 1, tokens.length - 1)!);
  assert.ok(early.some((x, i) => Math.abs(x - real[i]!) > 0.1));
});

test("ruffian lens prints every layer and position; its last layer agrees with the model", () => {
  const r = ruffian("lens", "-p", STORY_PROMPT, "--top", "2", "--json");
  assert.equal(r.code, 0, r.stderr);
  const grid = JSON.parse(r.stdout) as {
    tokens: { token: number }[];
    layers: { token: number; prob: number }[][][];
    output: { token: number; prob: number }[][];
  };
  assert.equal(grid.layers.length, 5);
  for (const row of grid.layers) assert.equal(row.length, grid.tokens.length);
  grid.output.forEach((top, pos) => {
    const last = grid.layers[4]![pos]!;
    assert.equal(last[0]!.token, top[0]!.token);
    assert.ok(Math.abs(last[0]!.prob - top[0]!.prob) < 1e-4);
  });
  const text = ruffian("lens", "-p", "Once upon");
  assert.equal(text.code, 0);
  assert.match(text.stdout, /^ {2}L4 .*$/m);
  assert.match(text.stdout, /^ {2}model .*$/m);
});

test("trace and lens refuse bad input with a clear message and exit code", () => {
  const bad = ruffian("trace", "-p", "x", "--hooks", "blocks.9.hook_resid_post", "--out", "x.st");
  assert.equal(bad.code, 2, "a usage error");
  assert.match(
    bad.stderr,
    /--hooks: hook point 'blocks\.9\.hook_resid_post': layer 9 is outside 0\.\.4/,
  );
  assert.doesNotMatch(bad.stderr, /\n\s+at /);
  const usage = ruffian("trace", "-p", "x");
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /--out/);
  const lens = ruffian("lens", "-p", "x", "--top", "0");
  assert.equal(lens.code, 2);
  assert.match(lens.stderr, /--top.*expected an integer ≥ 1/);
  const unwritable = ruffian("trace", "-p", "x", "--out", join(dir, "no", "such", "dir.st"));
  assert.equal(unwritable.code, 1);
  assert.match(unwritable.stderr, /--out: cannot write .*dir\.st/);
});
