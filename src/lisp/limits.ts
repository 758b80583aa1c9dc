// The sandbox bounds of a Lisp session. Every bound ends a run with a clean "limit" error rather
// than a hang or a crash of the host process.

export interface LispLimits {
  /** Evaluation steps per run (one step per evaluated form, plus work done inside builtins). */
  maxSteps: number;
  /** Pending continuation frames (non-tail calls and unfinished sub-forms). */
  maxDepth: number;
  /** Estimated live heap of the session: pairs, closures, frames, strings, big integers. */
  maxMemoryBytes: number;
  /** Size of any one exact integer. */
  maxIntegerBits: number;
  /** Wall-clock bound per run, checked every few thousand steps (as the C VM does). */
  wallClockMs: number;
  /** Characters of display/write output kept per run; the rest is dropped and flagged. */
  maxOutputBytes: number;
}

export const DEFAULT_LISP_LIMITS: Readonly<LispLimits> = Object.freeze({
  maxSteps: 100_000_000,
  maxDepth: 100_000,
  maxMemoryBytes: 64 * 1024 * 1024,
  maxIntegerBits: 262_144,
  wallClockMs: 10_000,
  maxOutputBytes: 64 * 1024,
});

/** The defaults with `overrides` applied; a bound that is not a positive number is refused. */
export function resolveLispLimits(overrides: Partial<LispLimits> = {}): Readonly<LispLimits> {
  const limits = { ...DEFAULT_LISP_LIMITS, ...overrides };
  for (const [name, value] of Object.entries(limits)) {
    if (typeof value !== "number" || !(value > 0)) {
      throw new Error(`Lisp limit '${name}' must be a positive number, got ${String(value)}`);
    }
  }
  return Object.freeze(limits);
}
