// The CALC evaluator: C's operators and precedence over exact integers (BigInt), so nothing
// overflows. Semantics, chosen to read like arithmetic and still agree with C wherever C's result
// fits its type:
// - integers have no size limit but a bound on bits (a result past it is an error, not a wrap);
// - `/` truncates toward zero and `%` takes the sign of the dividend, as in C;
// - `& | ^ ~` act on two's-complement integers of unbounded width (~0 is -1), `>>` floors;
// - a decimal number (`1.5`, `2e3`) makes its operation double-precision, as C's usual
//   arithmetic conversions do; `% & | ^ << >> ~` on a double is an error.
import type { VmError, VmValue } from "../vm/result.js";
import type { CalcToken } from "./calc.js";

type Num = bigint | number;

export type ExactResult =
  { ok: true; text: string; value: VmValue } | { ok: false; error: VmError };

class CalcError extends Error {
  constructor(
    readonly kind: VmError["kind"],
    message: string,
    readonly at: CalcToken,
  ) {
    super(message);
  }
}

/** Deepest parenthesis/unary nesting read recursively; the checker already balanced them. */
const MAX_NESTING = 2000;

const LEVELS: string[][] = [["|"], ["^"], ["&"], ["<<", ">>"], ["+", "-"], ["*", "/", "%"]];

const INT32 = 1n << 31n;
const INT64 = 1n << 63n;

/** Evaluates tokens that passed the CALC checker. */
export function evaluateExact(tokens: CalcToken[], maxBits: number): ExactResult {
  let pos = 0;
  let depth = 0;
  const bound = 1n << BigInt(maxBits);

  const checked = (v: bigint, at: CalcToken): bigint => {
    if (v >= bound || v <= -bound)
      throw new CalcError(
        "limit",
        `result is larger than ${maxBits} bits (the CALC size limit)`,
        at,
      );
    return v;
  };
  const needInt = (v: Num, op: CalcToken): bigint => {
    if (typeof v !== "bigint")
      throw new CalcError("type", `operator '${op.text}' needs integers, not a decimal number`, op);
    return v;
  };

  const literal = (t: CalcToken): Num => {
    const text = t.text;
    if (/^0[xX]/.test(text)) return BigInt(text);
    if (/[.eE]/.test(text)) return Number(text);
    if (text.length > 1 && text.startsWith("0")) {
      if (/[89]/.test(text))
        throw new CalcError("syntax", `invalid digit in octal number '${text}'`, t);
      return BigInt("0o" + text.slice(1));
    }
    return BigInt(text);
  };

  const unary = (): Num => {
    const t = tokens[pos]!;
    if (++depth > MAX_NESTING)
      throw new CalcError("limit", `expression is nested more than ${MAX_NESTING} deep`, t);
    try {
      pos++;
      switch (t.text) {
        case "(": {
          const v = level(0);
          pos++; // ")"
          return v;
        }
        case "+":
          return unary();
        case "-": {
          const v = unary();
          return typeof v === "bigint" ? -v : -v;
        }
        case "~":
          return ~needInt(unary(), t);
        default:
          return literal(t);
      }
    } finally {
      depth--;
    }
  };

  const apply = (op: CalcToken, a: Num, b: Num): Num => {
    if (typeof a === "number" || typeof b === "number") {
      const x = Number(a);
      const y = Number(b);
      switch (op.text) {
        case "+":
          return x + y;
        case "-":
          return x - y;
        case "*":
          return x * y;
        case "/":
          return x / y;
      }
      throw new CalcError("type", `operator '${op.text}' needs integers, not a decimal number`, op);
    }
    switch (op.text) {
      case "+":
        return checked(a + b, op);
      case "-":
        return checked(a - b, op);
      case "*":
        return checked(a * b, op);
      case "/":
      case "%":
        if (b === 0n) throw new CalcError("runtime", "division by zero", op);
        return op.text === "/" ? a / b : a % b;
      case "&":
        return a & b;
      case "|":
        return a | b;
      case "^":
        return a ^ b;
      case "<<":
      case ">>": {
        if (b < 0n) throw new CalcError("runtime", `negative shift count ${b}`, op);
        if (op.text === ">>") return b > BigInt(maxBits) ? (a < 0n ? -1n : 0n) : a >> b;
        if (a === 0n) return 0n;
        if (b > BigInt(maxBits)) checked(bound, op);
        return checked(a << b, op);
      }
    }
    throw new CalcError("syntax", `unknown operator '${op.text}'`, op);
  };

  const level = (k: number): Num => {
    if (k >= LEVELS.length) return unary();
    let v = level(k + 1);
    const ops = LEVELS[k]!;
    while (pos < tokens.length && ops.includes(tokens[pos]!.text)) {
      const op = tokens[pos++]!;
      v = apply(op, v, level(k + 1));
    }
    return v;
  };

  try {
    const v = level(0);
    return { ok: true, text: valueText(v), value: typed(v) };
  } catch (e) {
    if (!(e instanceof CalcError)) throw e;
    return {
      ok: false,
      error: { kind: e.kind, message: e.message, line: e.at.line, column: e.at.column },
    };
  }
}

/** The C type a value would have (int, long), or "integer" past 64 bits. */
function typed(v: Num): VmValue {
  if (typeof v === "number") return { ctype: "double", value: v };
  if (v >= -INT32 && v < INT32) return { ctype: "int", value: Number(v) };
  if (v >= -INT64 && v < INT64) return { ctype: "long", value: v };
  return { ctype: "integer", value: v };
}

function valueText(v: Num): string {
  if (typeof v === "bigint") return v.toString();
  if (Number.isNaN(v)) return "nan";
  if (!Number.isFinite(v)) return v > 0 ? "inf" : "-inf";
  return String(v);
}
