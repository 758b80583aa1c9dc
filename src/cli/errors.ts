// The CLI's exit-code contract: 0 success, 1 runtime failure (model, VM, I/O), 2 usage error
// (unknown option, bad value, missing argument — found before anything runs).

export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/** A mistake in how the command was called; reported without a stack trace, exit status 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** An expected runtime failure whose message is complete as it stands (e.g. `bad.c:1:11: …`);
 * reported without a stack trace or prefix, exit status 1. */
export class ReportedFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ReportedFailure";
  }
}
