// [CALC: …] regions: one arithmetic expression, exact. The input is checked to be only numbers,
// operators and parentheses, then evaluated by src/calc/exact.ts: integers of any size (C's
// operators and precedence, no overflow), doubles as soon as a decimal number takes part.
import type { VmOutcome } from "../vm/result.js";
import { evaluateExact } from "./exact.js";

export interface CalcOptions {
  /** Largest integer result or intermediate, in bits (default 65,536: about 20,000 digits). */
  maxBits?: number;
}

/** Operators CALC accepts, longest first so "<<" wins over a lone "<". */
const OPERATORS = ["<<", ">>", "+", "-", "*", "/", "%", "&", "|", "^", "~", "(", ")"];

const UNARY = new Set(["+", "-", "~"]);

const NUMBER = /^(0[xX][0-9a-fA-F]+|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)/;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*/;

interface CalcProblem {
  message: string;
  line: number;
  column: number;
}

export interface CalcToken {
  text: string;
  line: number;
  column: number;
}

type CheckResult = { ok: true; tokens: CalcToken[] } | { ok: false; problem: CalcProblem };

/** The first thing in `expr` that is not part of an arithmetic expression, or null. Checks the
 * token alphabet and the shape (operand/operator alternation, balanced parentheses), so every
 * syntax error is reported in CALC's own terms rather than the C compiler's. */
export function findCalcProblem(expr: string): CalcProblem | null {
  const result = checkCalc(expr);
  return result.ok ? null : result.problem;
}

function checkCalc(expr: string): CheckResult {
  const tokens: CalcToken[] = [];
  let line = 1;
  let column = 1;
  let pos = 0;
  /** True when the next token must start an operand: a number, '(' or a unary operator. */
  let wantOperand = true;
  const openParens: Array<{ line: number; column: number }> = [];
  const problem = (message: string): CheckResult => ({
    ok: false,
    problem: { message, line, column },
  });
  const skip = (n: number): void => {
    for (let k = 0; k < n; k++) {
      if (expr[pos] === "\n") {
        line++;
        column = 1;
      } else {
        column++;
      }
      pos++;
    }
  };
  while (pos < expr.length) {
    const rest = expr.slice(pos);
    const ch = expr[pos];
    if (/\s/.test(ch)) {
      skip(1);
      continue;
    }
    const number = NUMBER.exec(rest);
    if (number) {
      if (!wantOperand) return problem(`expected an operator before '${number[0]}'`);
      const after = rest[number[0].length];
      if (after !== undefined && /[A-Za-z0-9_.]/.test(after)) {
        skip(number[0].length);
        return problem(`unexpected '${after}' in a number`);
      }
      tokens.push({ text: number[0], line, column });
      skip(number[0].length);
      wantOperand = false;
      continue;
    }
    const name = IDENTIFIER.exec(rest);
    if (name) {
      const isCall = /^\s*\(/.test(rest.slice(name[0].length));
      return problem(
        isCall
          ? `function calls are not allowed in CALC: '${name[0]}'`
          : `names are not allowed in CALC: '${name[0]}' (only numbers and operators)`,
      );
    }
    const op = OPERATORS.find((o) => rest.startsWith(o));
    if (op === undefined) {
      if (ch === ";") return problem("unexpected ';': CALC takes a single expression");
      return problem(
        `unexpected '${ch}' (CALC allows numbers, + - * / % & | ^ ~ << >> and parentheses)`,
      );
    }
    if (op === "(") {
      if (!wantOperand) return problem("expected an operator before '('");
      openParens.push({ line, column });
    } else if (op === ")") {
      if (openParens.length === 0) return problem("unexpected ')'");
      if (wantOperand) return problem("expected a number before ')'");
      openParens.pop();
    } else if (wantOperand && !UNARY.has(op)) {
      return problem(`expected a number before '${op}'`);
    } else if (!wantOperand) {
      wantOperand = true;
    }
    tokens.push({ text: op, line, column });
    skip(op.length);
  }
  if (openParens.length > 0) {
    const open = openParens[openParens.length - 1];
    return {
      ok: false,
      problem: { message: "unclosed '('", line: open.line, column: open.column },
    };
  }
  if (wantOperand) {
    return tokens.length === 0
      ? { ok: false, problem: { message: "empty expression", line: 1, column: 1 } }
      : problem("expected a number at the end of the expression");
  }
  return { ok: true, tokens };
}

/** Evaluates one CALC expression exactly; errors name line:column in `expr`. */
export function runCalc(expr: string, options?: CalcOptions): VmOutcome {
  const started = performance.now();
  const checked = checkCalc(expr);
  const checkMs = performance.now() - started;
  const stats = { compileMs: checkMs, runMs: 0, instructions: 0, memoryBytes: 0 };
  if (!checked.ok)
    return { ok: false, error: { kind: "syntax", ...checked.problem }, stdout: "", stats };
  const t0 = performance.now();
  const result = evaluateExact(checked.tokens, options?.maxBits ?? DEFAULT_MAX_BITS);
  stats.runMs = performance.now() - t0;
  stats.instructions = checked.tokens.length;
  if (!result.ok) return { ok: false, error: result.error, stdout: "", stats };
  return {
    ok: true,
    text: result.text,
    stdout: "",
    value: result.value,
    outputTruncated: false,
    stats,
  };
}

const DEFAULT_MAX_BITS = 65_536;
