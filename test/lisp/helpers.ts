// Shared assertions for the Lisp tests: run source in a (fresh or given) session and check the
// result text or the exact error.
import assert from "node:assert/strict";
import { LispSession, type LispOptions } from "../../src/lisp/index.js";
import type { VmError, VmOutcome, VmSuccess } from "../../src/vm/result.js";

export function run(source: string, session: LispSession | LispOptions = {}): VmOutcome {
  const s = session instanceof LispSession ? session : new LispSession(session);
  return s.run(source);
}

/** Runs `source` and returns the success outcome, failing the test with the error otherwise. */
export function success(source: string, session: LispSession | LispOptions = {}): VmSuccess {
  const outcome = run(source, session);
  if (!outcome.ok) {
    const e = outcome.error;
    assert.fail(
      `expected success for ${source}, got ${e.kind}: ${e.message} at ${e.line}:${e.column}`,
    );
  }
  return outcome;
}

export function text(source: string, session: LispSession | LispOptions = {}): string {
  return success(source, session).text;
}

export function failure(source: string, session: LispSession | LispOptions = {}): VmError {
  const outcome = run(source, session);
  if (outcome.ok) assert.fail(`expected an error for ${source}, got ${outcome.text}`);
  return outcome.error;
}

/** Asserts the exact error: kind, message and position. */
export function assertError(
  source: string,
  expected: VmError,
  session: LispSession | LispOptions = {},
): void {
  assert.deepEqual(failure(source, session), expected);
}
