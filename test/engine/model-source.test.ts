// Model arguments: local paths resolve without the network; hf: URIs are parsed (never fetched
// in tests) and malformed ones are rejected with a message naming the problem.
import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseModelSource, resolveModelPath } from "../../src/engine/model-source.js";
import { storiesModelPath } from "./helpers.js";

test("a path is a file source, made absolute", () => {
  assert.deepEqual(parseModelSource("models/x.gguf"), {
    kind: "file",
    path: resolve("models/x.gguf"),
  });
});

test("hf: URIs with a quantization, a file or a branch", () => {
  assert.deepEqual(parseModelSource("hf:bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M"), {
    kind: "hf",
    uri: "hf:bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M",
    owner: "bartowski",
    repo: "Llama-3.2-1B-Instruct-GGUF",
    file: undefined,
    quant: "Q4_K_M",
    branch: undefined,
  });
  const withFile = parseModelSource("HF:ggml-org/models/tinyllamas/stories260K.gguf#main");
  assert.equal(withFile.kind, "hf");
  if (withFile.kind === "hf") {
    assert.equal(withFile.uri, "hf:ggml-org/models/tinyllamas/stories260K.gguf#main");
    assert.equal(withFile.repo, "models");
    assert.equal(withFile.file, "tinyllamas/stories260K.gguf");
    assert.equal(withFile.branch, "main");
    assert.equal(withFile.quant, undefined);
  }
  const bare = parseModelSource("hf:owner/repo");
  assert.ok(bare.kind === "hf" && bare.quant === undefined && bare.file === undefined);
});

test("malformed hf: URIs are rejected with the reason", () => {
  const cases: [string, RegExp][] = [
    ["hf:", /expected hf:<owner>\/<repo>/],
    ["hf:owner", /expected hf:<owner>\/<repo>/],
    ["hf:owner/", /expected hf:<owner>\/<repo>/],
    ["hf:owner/repo:", /empty quantization/],
    ["hf:owner/repo#", /empty branch/],
    ["hf:owner/repo:Q4/file.gguf", /either a quantization or a file path/],
    ["hf:owner/repo/../secret.gguf", /invalid file path/],
    ["hf:owner/repo/weights.bin", /must be a \.gguf file/],
    ["   ", /empty model argument/],
  ];
  for (const [arg, pattern] of cases) assert.throws(() => parseModelSource(arg), pattern, arg);
});

test("resolving a path needs no network and checks the file exists", async () => {
  assert.equal(await resolveModelPath(storiesModelPath), storiesModelPath);
  await assert.rejects(
    resolveModelPath("/nonexistent/model.gguf"),
    /model file not found: \/nonexistent\/model\.gguf/,
  );
});

test("an hf: model is found in the models directory without any download", async () => {
  const dir = mkdtempSync(join(tmpdir(), "ruffian-models-"));
  try {
    const uri = "hf:ggml-org/models/tinyllamas/stories260K.gguf";
    // Not cached and downloads not allowed: a clear error, no network.
    await assert.rejects(
      resolveModelPath(uri, { directory: dir }),
      /hf:ggml-org\/models\/tinyllamas\/stories260K\.gguf is not downloaded yet/,
    );
    // node-llama-cpp's cache naming for that URI; once present it resolves offline.
    const cached = join(dir, "hf_ggml-org_models_tinyllamas_stories260K.gguf");
    copyFileSync(storiesModelPath, cached);
    assert.equal(await resolveModelPath(uri, { directory: dir }), cached);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
