// A Lisp session: globals persist from one run (one [LISP: …] region) to the next, like the C
// VM's sessions. Each run reads, compiles, then evaluates its forms and reports a VmOutcome.
import type { VmOutcome, VmStats, VmValue } from "../outcome.js";
import { createBuiltins, corePrimitives } from "./builtins.js";
import { Compiler } from "./compile.js";
import { LispError } from "./errors.js";
import { Machine } from "./eval.js";
import { resolveLispLimits, type LispLimits } from "./limits.js";
import { GlobalCell, type Node } from "./nodes.js";
import { printValue } from "./printer.js";
import { read } from "./reader.js";
import { LISP_PRELUDE } from "./prelude.js";
import { Pair, Sym, sym, typeName, UNSPECIFIED, type Value } from "./values.js";

export interface LispOptions {
  limits?: Partial<LispLimits>;
}

/** The VmValue of a result: numbers, booleans and strings as themselves, the rest printed. */
function toVmValue(value: Value, printed: string): VmValue {
  const ctype = typeName(value);
  switch (typeof value) {
    case "bigint":
    case "number":
    case "boolean":
    case "string":
      return { ctype, value };
  }
  if (value === UNSPECIFIED) return { ctype, value: null };
  if (value instanceof Sym) return { ctype, value: value.name };
  return { ctype, value: printed };
}

export class LispSession {
  readonly limits: Readonly<LispLimits>;
  private readonly globals = new Map<Sym, GlobalCell>();
  private readonly compiler: Compiler;
  private readonly machine: Machine;

  constructor(options: LispOptions = {}) {
    this.limits = resolveLispLimits(options.limits);
    const builtins = createBuiltins();
    for (const b of builtins) {
      const cell = new GlobalCell(sym(b.name));
      cell.value = b;
      this.globals.set(cell.name, cell);
    }
    this.compiler = new Compiler(this.globals, corePrimitives(builtins));
    this.machine = new Machine(this.limits, this.globals);
    const prelude = this.run(LISP_PRELUDE);
    if (!prelude.ok) throw new Error(`the Lisp prelude failed: ${prelude.error.message}`);
  }

  /**
   * Runs every form of `source` in order. The result text is what display/write printed, if
   * anything, else the printed value of the last form (strings unquoted). A lone define yields
   * the defined name. Definitions made before a failure stay in the session, as in a REPL.
   */
  run(source: string): VmOutcome {
    const machine = this.machine;
    machine.beginRun();
    const compileStart = performance.now();
    const nodes: Node[] = [];
    try {
      for (const form of read(source)) {
        try {
          nodes.push(this.compiler.compileTop(form));
        } catch (e) {
          const error = asLispError(e);
          if (error.line === 0) [error.line, error.column] = [form.line, form.column];
          throw error;
        }
      }
    } catch (e) {
      return this.failure(e, performance.now() - compileStart, 0);
    }
    const compileMs = performance.now() - compileStart;
    const runStart = performance.now();
    let value: Value = UNSPECIFIED;
    try {
      for (const node of nodes) value = machine.execute(node);
    } catch (e) {
      return this.failure(e, compileMs, performance.now() - runStart);
    }
    const printed =
      value instanceof Pair
        ? printValue(value, "write", this.limits.maxOutputBytes)
        : printValue(value, "display", this.limits.maxOutputBytes);
    const text = machine.stdout !== "" ? machine.stdout : value === UNSPECIFIED ? "" : printed;
    return {
      ok: true,
      text,
      stdout: machine.stdout,
      value: toVmValue(value, printed),
      outputTruncated: machine.outputTruncated,
      stats: this.stats(compileMs, performance.now() - runStart),
    };
  }

  private stats(compileMs: number, runMs: number): VmStats {
    return {
      compileMs,
      runMs,
      instructions: this.machine.steps,
      memoryBytes: this.machine.memoryBytes(),
    };
  }

  private failure(thrown: unknown, compileMs: number, runMs: number): VmOutcome {
    const e = asLispError(thrown);
    return {
      ok: false,
      error: { kind: e.kind, message: e.message, line: e.line, column: e.column },
      stdout: this.machine.stdout,
      stats: this.stats(compileMs, runMs),
    };
  }
}

/** Nothing escapes a run: host failures (say, a JS stack overflow while compiling absurdly
 * nested derived forms) become Lisp errors too. */
function asLispError(e: unknown): LispError {
  if (e instanceof LispError) return e;
  if (e instanceof RangeError && /call stack/i.test(e.message)) {
    return new LispError("syntax", "program too deeply nested");
  }
  if (e instanceof RangeError) return new LispError("limit", "memory limit exceeded");
  return new LispError("runtime", `internal error: ${e instanceof Error ? e.message : String(e)}`);
}

/** Runs `source` in a fresh session. */
export function runLisp(source: string, options: LispOptions = {}): VmOutcome {
  return new LispSession(options).run(source);
}
