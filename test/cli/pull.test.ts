// `ruffian pull` and `ruffian models` without the network: argument checks, an unreachable
// endpoint (a closed local port), and listing a model cache the test fills itself.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { storiesModelPath } from "../../src/paths.js";
import { ruffian } from "./chat-helpers.js";

const tmp = mkdtempSync(join(tmpdir(), "ruffian-pull-"));
after(() => rmSync(tmp, { recursive: true, force: true }));

/** A local port nothing listens on: connections to it are refused at once. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

test("pull refuses what is not an hf: URI, with exit code 2", () => {
  const local = ruffian(["pull", "models/stories260K.gguf"]);
  assert.equal(local.code, 2);
  assert.match(local.stderr, /expected an hf: URI .* got 'models\/stories260K\.gguf'/);
  const malformed = ruffian(["pull", "hf:only-an-owner"]);
  assert.equal(malformed.code, 2);
  assert.match(malformed.stderr, /hf:only-an-owner: expected hf:<owner>\/<repo>/);
  const notGguf = ruffian(["pull", "hf:owner/repo/weights.bin"]);
  assert.equal(notGguf.code, 2);
  assert.match(notGguf.stderr, /must be a \.gguf file/);
  const missing = ruffian(["pull"]);
  assert.notEqual(missing.code, 0);
  assert.match(missing.stderr, /missing required argument 'uri'/);
});

test("pull from an unreachable endpoint fails at once and downloads nothing", async () => {
  const dir = join(tmp, "unreachable");
  mkdirSync(dir);
  const port = await closedPort();
  const r = ruffian(["pull", "hf:someone/some-model/model.gguf", "--dir", dir], "", {
    HF_ENDPOINT: `http://127.0.0.1:${port}/`,
  });
  assert.equal(r.code, 1);
  assert.match(r.stderr, new RegExp(`cannot reach http://127.0.0.1:${port}/ \\(ECONNREFUSED\\)`));
  assert.deepEqual(readdirSync(dir), []);
});

test("models lists the GGUF files of the cache with their architecture", () => {
  const dir = join(tmp, "cache");
  mkdirSync(dir);
  copyFileSync(storiesModelPath, join(dir, "stories260K.gguf"));
  writeFileSync(join(dir, "broken.gguf"), "not a model");
  writeFileSync(join(dir, "notes.txt"), "ignored");
  const r = ruffian(["models", "--dir", dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`^2 models in ${dir}$`, "m"));
  assert.match(r.stdout, /^ {2}stories260K\.gguf +\d+\.\d MiB {2}llama/m);
  assert.match(r.stdout, /^ {2}broken\.gguf +11 B {2}not a readable GGUF file/m);
  assert.doesNotMatch(r.stdout, /notes\.txt/);
});

test("models reads the cache folder from RUFFIAN_MODELS_DIR, and says when it is empty", () => {
  const dir = join(tmp, "empty");
  const r = ruffian(["models"], "", { RUFFIAN_MODELS_DIR: dir });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`^No models in ${dir}$`, "m"));
  assert.match(r.stdout, /ruffian pull hf:/);
});

test("a model pulled into the cache opens in chat by its hf: URI without the network", () => {
  // resolveModelFile names a downloaded hf:owner/repo/file.gguf hf_owner_repo_file.gguf.
  const dir = join(tmp, "pulled");
  mkdirSync(dir);
  copyFileSync(storiesModelPath, join(dir, "hf_karpathy_tinyllamas_stories260K.gguf"));
  const r = ruffian(
    [
      "chat",
      "--no-tty",
      "--device",
      "cpu",
      "-n",
      "4",
      "--models-dir",
      dir,
      "-m",
      "hf:karpathy/tinyllamas/stories260K.gguf",
    ],
    "/model\n",
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /hf_karpathy_tinyllamas_stories260K\.gguf/);
});
