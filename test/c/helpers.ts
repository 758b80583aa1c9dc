// Shared assertions for the C tests: run a block and get its text, or its error.
import assert from "node:assert/strict";
import { runC, type VmError, type VmOptions, type VmSuccess } from "../../src/vm/index.js";

/** Runs `src` and returns the injected text; fails the test with the error if it did not run. */
export function text(src: string, options?: VmOptions): string {
  return ok(src, options).text;
}

export function ok(src: string, options?: VmOptions): VmSuccess {
  const r = runC(src, options);
  if (!r.ok)
    assert.fail(
      `expected success, got ${r.error.kind} error: ${r.error.message} at ${r.error.line}:${r.error.column}`,
    );
  return r;
}

/** Runs `src` expecting failure and returns the error. */
export function fails(src: string, options?: VmOptions): VmError {
  const r = runC(src, options);
  if (r.ok) assert.fail(`expected an error, got '${r.text}'`);
  return r.error;
}
