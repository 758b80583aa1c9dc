// The error of a hook program that does not compile or whose main() fails: it names the program
// as the user gave it (`bad.c:1:11: expected ';'`), and is raised before any token is generated.
import type { VmError } from "../vm/result.js";

export class HookError extends Error {
  /** The hook program's name as given (a file path, or "hook"). */
  readonly file: string;
  /** 1-based position of the error in the program; 0 when it has none. */
  readonly line: number;
  readonly column: number;
  readonly kind: VmError["kind"];

  constructor(file: string, error: VmError) {
    const where = error.line > 0 ? `${file}:${error.line}:${error.column}` : file;
    super(`${where}: ${error.message}`);
    this.name = "HookError";
    this.file = file;
    this.line = error.line;
    this.column = error.column;
    this.kind = error.kind;
  }
}
