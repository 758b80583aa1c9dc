// The result and error shapes shared by every in-band language (C, CALC, Lisp): what the
// decode loop injects, what the CLI prints and what the server returns. It sits outside c/, lisp/
// and vm/ so that the compilers and the sandbox depend on it and not on each other.

/** syntax: could not be read; type: read but ill-typed/unknown name; runtime: trapped while
 * running (division by zero, bad memory access); limit: a sandbox bound was hit. */
export type VmErrorKind = "syntax" | "type" | "runtime" | "limit";

export interface VmStats {
  /** Milliseconds spent turning source into something runnable (parse + codegen + instantiate). */
  compileMs: number;
  /** Milliseconds spent running it. */
  runMs: number;
  /** CPU milliseconds the whole process (every thread, V8's compiler and collector helpers
   * included) used while it ran, for comparing with a native program's CPU time; a C block's run only (not a
   * function called by name, such as a hook). */
  runCpuMs?: number;
  /** Metered instructions (C) or evaluation steps (Lisp) used. */
  instructions: number;
  /** Bytes of VM memory in use at the end (heap + stack high-water mark). */
  memoryBytes: number;
}

/** A typed return value; `ctype` is the C spelling ("int", "long", "double", "char *", "void")
 * or the Lisp type name ("integer", "float", "string", "list", ...). */
export interface VmValue {
  ctype: string;
  value: number | bigint | string | boolean | null;
}

export interface VmError {
  kind: VmErrorKind;
  /** Names the problem, e.g. "division by zero", "unknown function 'foo'". */
  message: string;
  /** 1-based position in the submitted source; 0 when no position applies (e.g. a limit). */
  line: number;
  column: number;
}

export interface VmSuccess {
  ok: true;
  /** What gets injected into the token stream: stdout if anything was printed, else the value. */
  text: string;
  stdout: string;
  value: VmValue;
  /** True when stdout hit the output cap and was cut. */
  outputTruncated: boolean;
  /** Set when the block ran as a whole program (it defined `main`, or called `exit`): the
   * process exit status a C runner reports (main's return value or exit(n), modulo 256). */
  exitCode?: number;
  stats: VmStats;
}

export interface VmFailure {
  ok: false;
  error: VmError;
  /** Whatever was printed before the failure. */
  stdout: string;
  stats: VmStats;
}

export type VmOutcome = VmSuccess | VmFailure;

/** "division by zero at 3:12" — the form used inside `VM[error: …]` and on stderr. */
export function describeError(error: VmError): string {
  return error.line > 0 ? `${error.message} at ${error.line}:${error.column}` : error.message;
}

/** The text a region's outcome contributes inside `VM[…]`. */
export function injectionText(outcome: VmOutcome): string {
  return outcome.ok ? outcome.text : `error: ${describeError(outcome.error)}`;
}
