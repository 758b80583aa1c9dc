// Failures of the engine are clear errors, never crashes: missing, truncated and non-GGUF files,
// an unknown architecture, and a context too large for memory — all provoked for real.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openEngine } from "../../src/engine/open.js";
import { EngineError } from "../../src/engine/errors.js";
import { storiesModelPath } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "ruffian-engine-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const original = readFileSync(storiesModelPath);

function engineError(code: string, pattern: RegExp) {
  return (err: unknown) => {
    assert.ok(err instanceof EngineError, `expected an EngineError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    assert.match(err.message, pattern);
    return true;
  };
}

test("a missing model file", async () => {
  const path = join(dir, "absent.gguf");
  await assert.rejects(openEngine(path, { device: "cpu" }), /model file not found: .*absent\.gguf/);
});

test("a file that is not GGUF", async () => {
  const path = join(dir, "notes.gguf");
  writeFileSync(path, "this is a text file, not a model\n");
  await assert.rejects(
    openEngine(path, { device: "cpu" }),
    engineError(
      "not-gguf",
      /not a GGUF model file: .*notes\.gguf \(starts with "this", expected "GGUF"\)/,
    ),
  );
});

test("a truncated copy of a real model", async () => {
  const path = join(dir, "truncated.gguf");
  writeFileSync(path, original.subarray(0, Math.floor(original.length / 2)));
  await assert.rejects(
    openEngine(path, { device: "cpu" }),
    engineError("model-load", /cannot load model .*truncated\.gguf: .+/),
  );
});

test("a file cut inside its header", async () => {
  const path = join(dir, "header.gguf");
  writeFileSync(path, original.subarray(0, 600));
  await assert.rejects(
    openEngine(path, { device: "cpu" }),
    engineError("model-load", /cannot load model .*header\.gguf/),
  );
});

test("an architecture llama.cpp does not know", async () => {
  const patched = Buffer.from(original);
  const key = patched.indexOf("general.architecture");
  // key, then type (u32 8 = string), length (u64 5), then the value "llama".
  const value = key + "general.architecture".length + 4 + 8;
  assert.equal(patched.toString("latin1", value, value + 5), "llama");
  patched.write("zzzzz", value, "latin1");
  const path = join(dir, "alien.gguf");
  writeFileSync(path, patched);
  await assert.rejects(
    openEngine(path, { device: "cpu" }),
    engineError("unsupported-model", /unsupported model architecture .*alien\.gguf: .*zzzzz/),
  );
});

test("a context too large for memory", async () => {
  await assert.rejects(
    openEngine(storiesModelPath, { device: "cpu", contextSize: 2_000_000_000 }),
    engineError(
      "context-create",
      /cannot create a context of 2000000000 tokens .*KV cache needs about \d+\.\d GiB, more than this machine's/,
    ),
  );
});

test("the process still works after all of the above", async () => {
  const engine = await openEngine(storiesModelPath, { device: "cpu", contextSize: 128 });
  try {
    engine.decode([{ seq: 0, tokens: engine.tokenize("Once", { addSpecial: true }) }]);
    assert.equal(engine.logits(0).length, 512);
  } finally {
    engine.dispose();
  }
});
