// The must-show path as a user runs it: `ruffian steer train` writes a controlvector GGUF, and
// `ruffian run --control-vector` with it shifts the next-token sentiment probability.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { packageRoot } from "../../src/paths.js";
import { readGguf } from "../../src/steer/gguf-reader.js";

const bin = join(packageRoot, "bin", "ruffian.js");
const fixtures = join(packageRoot, "test", "fixtures", "steer");
const probe = join(packageRoot, "examples", "hooks", "sentiment-probe.c");
const dir = mkdtempSync(join(tmpdir(), "ruffian-steer-cli-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const PROMPT = "Once upon a time, there was a little girl. She felt very";

function ruffian(...args: string[]) {
  const r = spawnSync(process.execPath, [bin, ...args], { encoding: "utf8", cwd: dir });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** `ruffian steer train` on the happy/sad fixtures, with more arguments. */
const train = (...extra: string[]) =>
  ruffian(
    "steer",
    "train",
    "--positive",
    join(fixtures, "happy.txt"),
    "--negative",
    join(fixtures, "sad.txt"),
    ...extra,
  );

/** P(" happy") and P(" sa") in percent, as the probe hook prints them before the first token. */
function sentiment(...extra: string[]): { happy: number; sad: number } {
  const r = ruffian("run", "-p", PROMPT, "-n", "1", "--hook", probe, ...extra);
  assert.equal(r.code, 0, r.stderr);
  const m = /P\(' happy'\) = ([\d.]+)%\s+P\(' sa'\) = ([\d.]+)%/.exec(r.stderr);
  assert.ok(m, r.stderr);
  return { happy: Number(m[1]), sad: Number(m[2]) };
}

test("steer train writes a controlvector GGUF; run --control-vector shifts sentiment", () => {
  const out = join(dir, "happy.gguf");
  const t = train("--method", "mean-diff", "--layers", "1-4", "--out", out);
  assert.equal(t.code, 0, t.stderr);
  const f = readGguf(out);
  assert.equal(f.metadata.get("general.architecture"), "controlvector");
  assert.equal(f.metadata.get("controlvector.layer_count"), 4);
  assert.deepEqual(
    [...f.tensors.keys()],
    ["direction.1", "direction.2", "direction.3", "direction.4"],
  );

  const base = sentiment();
  const up = sentiment("--control-vector", `${out}:1`);
  const down = sentiment("--control-vector", `${out}:-1`);
  const zero = sentiment("--control-vector", `${out}:0`);
  // The stated margin: at least +5 points for " happy" and a lower " sad" at scale 1; the
  // opposite at scale −1; scale 0 changes nothing.
  assert.ok(up.happy >= base.happy + 5 && up.sad < base.sad, `${JSON.stringify({ base, up })}`);
  assert.ok(down.happy < base.happy && down.sad > base.sad, `${JSON.stringify({ base, down })}`);
  assert.deepEqual(zero, base);
});

test("steer train and --control-vector refuse bad input by name", () => {
  const missing = ruffian(
    "steer",
    "train",
    "--positive",
    "nope.txt",
    "--negative",
    "x",
    "--out",
    "v.gguf",
  );
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /--positive: cannot read nope\.txt/);
  const method = train("--method", "ica", "--out", "v.gguf");
  assert.equal(method.code, 2, "a usage error");
  assert.match(method.stderr, /'ica' is invalid.*pca, mean-diff/s);
  const layers = train("--layers", "0-3", "--out", "v.gguf");
  assert.equal(layers.code, 2);
  assert.match(layers.stderr, /--layers: layer 0 is outside 1\.\.4/);
  const notVector = ruffian(
    "run",
    "-p",
    "x",
    "-n",
    "1",
    "--control-vector",
    join(packageRoot, "models", "stories260K.gguf"),
  );
  assert.equal(notVector.code, 1);
  assert.match(notVector.stderr, /general\.architecture is 'llama', not 'controlvector'/);
  assert.doesNotMatch(notVector.stderr, /\n\s+at /);
});
