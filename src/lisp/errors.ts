// The one exception type the Lisp throws internally; the session turns it into a VmError.
// Builtins throw it without a position and the evaluator adds the position of the call.
import type { VmErrorKind } from "../outcome.js";

export class LispError extends Error {
  constructor(
    readonly kind: VmErrorKind,
    message: string,
    public line = 0,
    public column = 0,
  ) {
    super(message);
  }
}

export function typeError(message: string): LispError {
  return new LispError("type", message);
}

export function runtimeError(message: string): LispError {
  return new LispError("runtime", message);
}

export function limitError(message: string): LispError {
  return new LispError("limit", message);
}

export function integerTooLarge(maxBits: number): LispError {
  return limitError(`memory limit exceeded (integer larger than ${maxBits} bits)`);
}
