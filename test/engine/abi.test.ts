// ABI safety of the koffi binding: the mirrored struct layouts against the bundled llama.h
// (compiled offsetof probes with gcc), and the start-up guard against the real library.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import koffi from "koffi";
import { packageRoot } from "../../src/paths.js";
import {
  AbiMismatchError,
  Batch,
  ChatMessage,
  ContextParams,
  GGML_OP_ADD,
  GGML_OP_GET_ROWS,
  GGML_OP_NONE,
  GGML_OP_RESHAPE,
  GGML_OP_ROPE,
  GGML_OP_SET_ROWS,
  GGML_OP_SOFT_MAX,
  GGML_TYPE_F16,
  GGML_TYPE_F32,
  GGML_TYPE_I32,
  GGML_TYPE_I64,
  ModelParams,
  PINNED_LLAMA_RELEASE,
  contextParamsFields,
  ggmlTensorLayout,
  layoutOf,
  verifyAbi,
} from "../../src/engine/llama/abi.js";
import { loadLlamaLibrary } from "../../src/engine/llama/library.js";

const llamaDir = join(packageRoot, "node_modules", "node-llama-cpp", "llama");

function available(cmd: string): boolean {
  return spawnSync(cmd, ["--version"], { stdio: "ignore" }).status === 0;
}

const toolsMissing =
  !available("gcc") || !available("git") || !available("tar")
    ? "gcc, git or tar not available"
    : false;

test("the pinned llama.cpp release is the one the layouts were mirrored from", () => {
  const info = JSON.parse(readFileSync(join(llamaDir, "binariesGithubRelease.json"), "utf8"));
  assert.equal(info.release, PINNED_LLAMA_RELEASE);
});

test(
  "mirrored layouts equal offsetof/sizeof of the bundled llama.h",
  { skip: toolsMissing },
  () => {
    const dir = mkdtempSync(join(tmpdir(), "ruffian-abi-"));
    try {
      const repo = join(dir, "repo.git");
      execFileSync("git", [
        "clone",
        "--quiet",
        "--bare",
        join(llamaDir, "gitRelease.bundle"),
        repo,
      ]);
      const tar = join(dir, "headers.tar");
      execFileSync("git", [
        "--git-dir",
        repo,
        "archive",
        "-o",
        tar,
        "HEAD",
        "include",
        "ggml/include",
      ]);
      execFileSync("tar", ["-xf", tar, "-C", dir]);

      const structs = [
        ["llama_context_params", ContextParams],
        ["llama_model_params", ModelParams],
        ["llama_batch", Batch],
        ["llama_chat_message", ChatMessage],
      ] as const;
      const lines: string[] = [];
      const expected = new Map<string, number>();
      for (const [cName, type] of structs) {
        const layout = layoutOf(type);
        lines.push(`P("${cName}.sizeof", sizeof(struct ${cName}));`);
        expected.set(`${cName}.sizeof`, layout.size);
        for (const [field, offset] of Object.entries(layout.offsets)) {
          lines.push(`P("${cName}.${field}", offsetof(struct ${cName}, ${field}));`);
          expected.set(`${cName}.${field}`, offset);
        }
      }
      lines.push(`P("ggml_tensor.sizeof", sizeof(struct ggml_tensor));`);
      expected.set("ggml_tensor.sizeof", ggmlTensorLayout.size);
      for (const [field, offset] of Object.entries(ggmlTensorLayout.offsets)) {
        lines.push(`P("ggml_tensor.${field}", offsetof(struct ggml_tensor, ${field}));`);
        expected.set(`ggml_tensor.${field}`, offset);
      }
      const constants = {
        GGML_TYPE_F32,
        GGML_TYPE_F16,
        GGML_TYPE_I32,
        GGML_TYPE_I64,
        GGML_OP_NONE,
        GGML_OP_ADD,
        GGML_OP_GET_ROWS,
        GGML_OP_SET_ROWS,
        GGML_OP_RESHAPE,
        GGML_OP_SOFT_MAX,
        GGML_OP_ROPE,
      };
      for (const [name, value] of Object.entries(constants)) {
        lines.push(`P("${name}", (size_t)${name});`);
        expected.set(name, value);
      }
      const source = [
        `#include "llama.h"`,
        `#include <stddef.h>`,
        `#include <stdio.h>`,
        `#define P(name, value) printf("%s %zu\\n", name, (size_t)(value))`,
        `int main(void) {`,
        ...lines.map((l) => `  ${l}`),
        `  return 0;`,
        `}`,
      ].join("\n");
      writeFileSync(join(dir, "probe.c"), source);
      const exe = join(dir, "probe");
      execFileSync("gcc", [
        "-I",
        join(dir, "include"),
        "-I",
        join(dir, "ggml", "include"),
        join(dir, "probe.c"),
        "-o",
        exe,
      ]);
      const measured = new Map<string, number>();
      for (const line of execFileSync(exe, { encoding: "utf8" }).trim().split("\n")) {
        const [name, value] = line.split(" ");
        measured.set(name!, Number(value));
      }
      const mismatches = [...expected].filter(([name, value]) => measured.get(name) !== value);
      assert.deepEqual(
        mismatches.map(
          ([name, value]) => `${name}: mirrored ${value}, header ${measured.get(name)}`,
        ),
        [],
      );
      // Every field of the C struct is mirrored: the sizes agree and no field was skipped.
      assert.equal(measured.get("llama_context_params.sizeof"), 160);
      assert.equal(expected.size, measured.size);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test("the start-up guard accepts the installed library", async () => {
  const lib = await loadLlamaLibrary("cpu");
  assert.doesNotThrow(() => verifyAbi(lib.handle));
});

test("the start-up guard rejects a layout missing a field (an older llama.h)", async () => {
  const lib = await loadLlamaLibrary("cpu");
  const { n_rs_seq: _dropped, ...older } = contextParamsFields;
  const olderLayout = layoutOf(koffi.struct("test_older_context_params", older));
  assert.throws(
    () => verifyAbi(lib.handle, { context: olderLayout, model: layoutOf(ModelParams) }),
    (err: unknown) =>
      err instanceof AbiMismatchError &&
      // Padding keeps the size at 160, so the default-value fingerprint is what catches it.
      /llama_context_params\.n_threads at offset 24: expected 4, found 1/.test(err.message),
  );
});

test("the start-up guard rejects a layout with an extra trailing field", async () => {
  const lib = await loadLlamaLibrary("cpu");
  const newer = layoutOf(
    koffi.struct("test_newer_context_params", { ...contextParamsFields, extra: "void *" }),
  );
  assert.throws(
    () => verifyAbi(lib.handle, { context: newer, model: layoutOf(ModelParams) }),
    /wrote 160 bytes, the mirrored struct has 168/,
  );
});
