// The one exception type every compiler stage throws: a VmError kind, a message naming the
// problem and the 1-based line:column in the submitted source.
import type { VmErrorKind } from "../outcome.js";

export class CompileError extends Error {
  constructor(
    readonly kind: VmErrorKind,
    message: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(message);
  }
}

export interface Pos {
  line: number;
  col: number;
}

export function syntaxError(message: string, at: Pos): CompileError {
  return new CompileError("syntax", message, at.line, at.col);
}

export function typeError(message: string, at: Pos): CompileError {
  return new CompileError("type", message, at.line, at.col);
}
