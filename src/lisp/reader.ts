// Turns Lisp source text into positioned forms (syntax.ts). Iterative, with an explicit stack of
// open lists, so deeply nested input gives a clean error instead of overflowing the JS stack.
import { LispError } from "./errors.js";
import type { Syn, SynList } from "./syntax.js";
import { sym, type Value } from "./values.js";

/** Deeper nesting than this is refused: the compiler walks forms recursively. */
export const MAX_NESTING = 1000;

const QUOTE_PREFIXES: Record<string, string> = {
  "'": "quote",
  "`": "quasiquote",
  ",": "unquote",
  ",@": "unquote-splicing",
};

const CLOSER_OF: Record<string, string> = { "(": ")", "[": "]" };

interface OpenList {
  type: "list";
  list: SynList;
  opener: string;
  /** 0: reading items; 1: just saw '.', expecting the tail; 2: have the tail, expecting ')'. */
  dotState: 0 | 1 | 2;
}

interface OpenQuote {
  type: "quote";
  name: string;
  token: string;
  line: number;
  column: number;
}

function syntaxError(message: string, line: number, column: number): LispError {
  return new LispError("syntax", message, line, column);
}

function isDelimiter(ch: string): boolean {
  return /[\s()[\]";'`,]/.test(ch);
}

const INTEGER = /^[+-]?\d+$/;
const FLOAT = /^[+-]?(\d+\.\d*|\.\d+|\d+)(e[+-]?\d+)?$/i;
const RADIX: Record<string, number> = { x: 16, b: 2, o: 8, d: 10 };
const DIGITS: Record<number, RegExp> = {
  16: /^[0-9a-f]+$/i,
  2: /^[01]+$/,
  8: /^[0-7]+$/,
  10: /^[0-9]+$/,
};

/** The value of an atom's text, or a syntax error for malformed '#' syntax. */
function parseAtom(text: string, line: number, column: number): Value {
  if (INTEGER.test(text)) return BigInt(text);
  if (FLOAT.test(text)) return Number(text);
  if (text === "+inf.0") return Infinity;
  if (text === "-inf.0") return -Infinity;
  if (text === "+nan.0" || text === "-nan.0") return NaN;
  if (text.startsWith("#")) {
    const lower = text.toLowerCase();
    if (lower === "#t" || lower === "#true") return true;
    if (lower === "#f" || lower === "#false") return false;
    const radix = RADIX[lower[1]];
    if (radix !== undefined) {
      const sign = lower[2] === "-" ? -1n : 1n;
      const digits = lower[2] === "-" || lower[2] === "+" ? lower.slice(3) : lower.slice(2);
      if (DIGITS[radix].test(digits)) {
        const prefix = radix === 16 ? "0x" : radix === 2 ? "0b" : radix === 8 ? "0o" : "";
        return sign * BigInt(prefix + digits);
      }
      throw syntaxError(`bad number '${text}'`, line, column);
    }
    if (text.startsWith("#\\")) {
      throw syntaxError(`characters ('${text}') are not supported; use strings`, line, column);
    }
    throw syntaxError(`unknown syntax '${text}'`, line, column);
  }
  return sym(text);
}

const SIMPLE_ESCAPES: Record<string, string> = {
  n: "\n",
  t: "\t",
  r: "\r",
  "\\": "\\",
  '"': '"',
  a: "\x07",
  b: "\b",
  "0": "\0",
};

/** Reads every form in `source`; throws a positioned syntax LispError on malformed input. */
export function read(source: string): Syn[] {
  const forms: Syn[] = [];
  const stack: Array<OpenList | OpenQuote> = [];
  let pos = 0;
  let line = 1;
  let column = 1;

  const advance = (): string => {
    const ch = source[pos++];
    if (ch === "\n") {
      line++;
      column = 1;
    } else {
      column++;
    }
    return ch;
  };

  /** Hands a finished datum to whatever is waiting for it: a quote prefix, a list or the top. */
  const emit = (datum: Syn): void => {
    for (;;) {
      const top = stack[stack.length - 1];
      if (top === undefined) {
        forms.push(datum);
        return;
      }
      if (top.type === "quote") {
        stack.pop();
        const head: Syn = {
          kind: "atom",
          value: sym(top.name),
          line: top.line,
          column: top.column,
        };
        datum = {
          kind: "list",
          items: [head, datum],
          dotted: null,
          line: top.line,
          column: top.column,
        };
        continue;
      }
      if (top.dotState === 0) top.list.items.push(datum);
      else if (top.dotState === 1) {
        top.list.dotted = datum;
        top.dotState = 2;
      } else {
        throw syntaxError("expected ')' after the tail of a dotted list", datum.line, datum.column);
      }
      return;
    }
  };

  const open = (opener: string, l: number, c: number): void => {
    if (stack.length >= MAX_NESTING) {
      throw syntaxError(`nesting too deep (more than ${MAX_NESTING} levels)`, l, c);
    }
    const list: SynList = { kind: "list", items: [], dotted: null, line: l, column: c };
    stack.push({ type: "list", list, opener, dotState: 0 });
  };

  const close = (closer: string, l: number, c: number): void => {
    const top = stack[stack.length - 1];
    if (top === undefined) throw syntaxError(`unexpected '${closer}'`, l, c);
    if (top.type === "quote") {
      throw syntaxError(`expected a datum after '${top.token}'`, top.line, top.column);
    }
    const expected = CLOSER_OF[top.opener];
    if (closer !== expected) {
      throw syntaxError(
        `'${closer}' does not match the '${top.opener}' at ${top.list.line}:${top.list.column}`,
        l,
        c,
      );
    }
    if (top.dotState === 1) throw syntaxError("expected a datum after '.'", l, c);
    stack.pop();
    emit(top.list);
  };

  while (pos < source.length) {
    const ch = source[pos];
    const l = line;
    const c = column;
    if (/\s/.test(ch)) {
      advance();
    } else if (ch === ";") {
      while (pos < source.length && source[pos] !== "\n") advance();
    } else if (ch === "#" && source[pos + 1] === "|") {
      let depth = 0;
      do {
        if (pos >= source.length) throw syntaxError("unterminated block comment '#|'", l, c);
        if (source[pos] === "#" && source[pos + 1] === "|") {
          depth++;
          advance();
        } else if (source[pos] === "|" && source[pos + 1] === "#") {
          depth--;
          advance();
        }
        advance();
      } while (depth > 0);
    } else if (ch === "(" || ch === "[") {
      advance();
      open(ch, l, c);
    } else if (ch === ")" || ch === "]") {
      advance();
      close(ch, l, c);
    } else if (ch === "'" || ch === "`" || ch === ",") {
      advance();
      let token: string = ch;
      if (ch === "," && source[pos] === "@") {
        advance();
        token = ",@";
      }
      stack.push({ type: "quote", name: QUOTE_PREFIXES[token], token, line: l, column: c });
    } else if (ch === '"') {
      advance();
      let text = "";
      for (;;) {
        if (pos >= source.length) throw syntaxError("unterminated string", l, c);
        const sl = line;
        const sc = column;
        const s = advance();
        if (s === '"') break;
        if (s !== "\\") {
          text += s;
          continue;
        }
        if (pos >= source.length) throw syntaxError("unterminated string", l, c);
        const e = advance();
        const simple = SIMPLE_ESCAPES[e];
        if (simple !== undefined) {
          text += simple;
        } else if (e === "x") {
          const end = source.indexOf(";", pos);
          const hex = end < 0 ? "" : source.slice(pos, end);
          if (!/^[0-9a-fA-F]{1,6}$/.test(hex) || parseInt(hex, 16) > 0x10ffff) {
            throw syntaxError("bad string escape '\\x' (expected \\x<hex digits>;)", sl, sc);
          }
          while (pos <= end) advance();
          text += String.fromCodePoint(parseInt(hex, 16));
        } else {
          throw syntaxError(`bad string escape '\\${e}'`, sl, sc);
        }
      }
      emit({ kind: "atom", value: text, line: l, column: c });
    } else {
      let text = "";
      while (pos < source.length && !isDelimiter(source[pos])) text += advance();
      if (text === ".") {
        const top = stack[stack.length - 1];
        if (top?.type !== "list" || top.dotState !== 0 || top.list.items.length === 0) {
          throw syntaxError("unexpected '.'", l, c);
        }
        top.dotState = 1;
        continue;
      }
      emit({ kind: "atom", value: parseAtom(text, l, c), line: l, column: c });
    }
  }

  const top = stack[stack.length - 1];
  if (top !== undefined) {
    if (top.type === "quote") {
      throw syntaxError(`expected a datum after '${top.token}'`, top.line, top.column);
    }
    throw syntaxError(`unclosed '${top.opener}'`, top.list.line, top.list.column);
  }
  return forms;
}
