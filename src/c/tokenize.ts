// Stage 1: turns C source text into tokens (identifiers, keywords, punctuators, numbers with
// their C type, string and character literals), each carrying its line:column.
import { syntaxError } from "./errors.js";

export type TokenKind = "ident" | "keyword" | "punct" | "num" | "str" | "eof" | "hash";

export interface Token {
  kind: TokenKind;
  text: string;
  line: number;
  col: number;
  /** First token on its line (preprocessor directives start here). */
  atBol: boolean;
  /** Preceded by whitespace (matters for `#define F(x)` vs `#define F (x)`). */
  hasSpace: boolean;
  /** num: integer (bigint) or floating value, and the literal's C type. */
  ival?: bigint;
  fval?: number;
  numType?: "int" | "uint" | "long" | "ulong" | "float" | "double";
  /** str: the bytes (without the terminating NUL). */
  bytes?: number[];
  /** str: a wide literal (L"…"): `units` holds its code points, one wchar_t (int) each. */
  units?: number[];
  /** Macro names this token came out of, so expansion does not recurse forever. */
  hideset?: Set<string>;
}

const KEYWORDS = new Set(
  (
    "auto break case char const continue default do double else enum extern float for goto if " +
    "inline int long register restrict return short signed sizeof static struct switch typedef " +
    "union unsigned void volatile while _Bool bool"
  ).split(" "),
);

const PUNCTS = [
  "<<=",
  ">>=",
  "...",
  "==",
  "!=",
  "<=",
  ">=",
  "->",
  "+=",
  "-=",
  "*=",
  "/=",
  "%=",
  "&=",
  "|=",
  "^=",
  "&&",
  "||",
  "++",
  "--",
  "<<",
  ">>",
  "##",
];

export const isKeyword = (s: string): boolean => KEYWORDS.has(s);

function readEscape(src: string, i: number, at: { line: number; col: number }): [number, number] {
  const c = src[i]!;
  switch (c) {
    case "n":
      return [10, i + 1];
    case "t":
      return [9, i + 1];
    case "r":
      return [13, i + 1];
    case "0":
    case "1":
    case "2":
    case "3":
    case "4":
    case "5":
    case "6":
    case "7": {
      let v = 0;
      let j = i;
      while (j < i + 3 && /[0-7]/.test(src[j] ?? "")) v = v * 8 + Number(src[j++]);
      return [v & 0xff, j];
    }
    case "x": {
      let j = i + 1;
      let v = 0;
      if (!/[0-9a-fA-F]/.test(src[j] ?? "")) throw syntaxError("\\x used with no hex digits", at);
      while (/[0-9a-fA-F]/.test(src[j] ?? "")) v = v * 16 + parseInt(src[j++]!, 16);
      return [v & 0xff, j];
    }
    case "a":
      return [7, i + 1];
    case "b":
      return [8, i + 1];
    case "f":
      return [12, i + 1];
    case "v":
      return [11, i + 1];
    case "e":
      return [27, i + 1];
    default:
      return [c.charCodeAt(0), i + 1];
  }
}

/** Appends the UTF-8 bytes of one source character. */
function pushChar(bytes: number[], ch: string): void {
  const code = ch.codePointAt(0)!;
  if (code < 0x80) bytes.push(code);
  else for (const b of Buffer.from(ch, "utf8")) bytes.push(b);
}

function readNumber(text: string, at: { line: number; col: number }): Partial<Token> {
  const lower = text.toLowerCase();
  const isHex = lower.startsWith("0x");
  const isFloat =
    !isHex && (lower.includes(".") || lower.includes("e")) ? true : isHex && lower.includes("p");
  if (isFloat) {
    let body = lower;
    let numType: "float" | "double" = "double";
    if (body.endsWith("f")) {
      numType = "float";
      body = body.slice(0, -1);
    } else if (body.endsWith("l")) body = body.slice(0, -1);
    const v = Number(body);
    if (Number.isNaN(v)) throw syntaxError(`invalid number '${text}'`, at);
    return { fval: numType === "float" ? Math.fround(v) : v, numType };
  }
  const m = /^(0x[0-9a-f]+|0b[01]+|0[0-7]*|[1-9][0-9]*)(u|ul|ull|l|ll|lu|llu)?$/.exec(lower);
  if (!m) throw syntaxError(`invalid number '${text}'`, at);
  const digits = m[1]!;
  let v: bigint;
  if (digits.startsWith("0x") || digits.startsWith("0b")) v = BigInt(digits);
  else if (digits.length > 1 && digits.startsWith("0")) v = BigInt("0o" + digits.slice(1));
  else v = BigInt(digits);
  const suffix = m[2] ?? "";
  const unsigned = suffix.includes("u");
  const long = suffix.includes("l");
  const decimal = !(digits.startsWith("0") && digits.length > 1);
  let numType: Token["numType"];
  if (long) numType = unsigned ? "ulong" : "long";
  else if (unsigned) numType = v <= 0xffffffffn ? "uint" : "ulong";
  else if (v <= 0x7fffffffn) numType = "int";
  else if (!decimal && v <= 0xffffffffn) numType = "uint";
  else numType = v <= 0x7fffffffffffffffn ? "long" : "ulong";
  return { ival: BigInt.asUintN(64, v), numType };
}

/** A sign continues a number only right after its exponent letter (1e-5, 0x1p+3). */
function exponentBefore(sofar: string): boolean {
  const hex = /^0[xX]/.test(sofar);
  return hex ? /[pP]$/.test(sofar) : /[eE]$/.test(sofar);
}

const isDigit = (c: number): boolean => c >= 48 && c <= 57;
const isIdentStart = (c: number): boolean =>
  (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c === 36;
const isIdentChar = (c: number): boolean => isIdentStart(c) || isDigit(c);
const SINGLE_PUNCT = new Set("+-*/%&|^~!<>=?:;,.()[]{}");
const PUNCTS_BY_FIRST = new Map<string, string[]>();
for (const p of PUNCTS) {
  const list = PUNCTS_BY_FIRST.get(p[0]!) ?? [];
  list.push(p);
  PUNCTS_BY_FIRST.set(p[0]!, list);
}

/** The longest multi-character punctuator at `i`, if any. */
function multiPunct(src: string, i: number, first: string): string | undefined {
  const candidates = PUNCTS_BY_FIRST.get(first);
  if (candidates) for (const p of candidates) if (src.startsWith(p, i)) return p;
  return undefined;
}

/** A token with every field present, in one order: tokens then share one hidden class, so the
 * preprocessor's and the parser's reads of `kind` and `text` stay monomorphic. */
function token(
  kind: TokenKind,
  text: string,
  line: number,
  col: number,
  atBol: boolean,
  hasSpace: boolean,
): Token {
  return {
    kind,
    text,
    line,
    col,
    atBol,
    hasSpace,
    ival: undefined,
    fval: undefined,
    numType: undefined,
    bytes: undefined,
    units: undefined,
    hideset: undefined,
  };
}

/** A decimal integer literal without suffix that fits in int (most literals): its value. */
function smallDecimal(text: string): number {
  if (text.length > 9 || (text.length > 1 && text.charCodeAt(0) === 48)) return -1;
  let v = 0;
  for (let k = 0; k < text.length; k++) {
    const d = text.charCodeAt(k) - 48;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}

/** Tokenizes the whole source; a final eof token marks the end. */
export function tokenize(src: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  let line = 1;
  let lineStart = 0;
  let atBol = true;
  let hasSpace = false;
  const here = (): { line: number; col: number } => ({ line, col: i - lineStart + 1 });
  const push = (t: Token): void => {
    tokens.push(t);
    atBol = false;
    hasSpace = false;
  };
  const n = src.length;
  /** Set after an L/u/U prefix: the literal that follows is wide and starts at the prefix. */
  let wide: { col: number } | null = null;
  while (i < n) {
    const code = src.charCodeAt(i);
    if (code === 10) {
      i++;
      line++;
      lineStart = i;
      atBol = true;
      hasSpace = false;
      continue;
    }
    if (code === 32 || code === 9 || code === 13 || code === 12 || code === 11) {
      // A run of blanks (indentation) in one go.
      i++;
      for (let d = src.charCodeAt(i); d === 32 || d === 9; d = src.charCodeAt(++i));
      hasSpace = true;
      continue;
    }
    if (code === 92 && src.charCodeAt(i + 1) === 10) {
      i += 2;
      line++;
      lineStart = i;
      continue;
    }
    if (code === 47 && src.charCodeAt(i + 1) === 47) {
      while (i < n && src.charCodeAt(i) !== 10) i++;
      hasSpace = true;
      continue;
    }
    if (code === 47 && src.charCodeAt(i + 1) === 42) {
      const start = here();
      const end = src.indexOf("*/", i + 2);
      if (end < 0) throw syntaxError("unterminated comment", start);
      for (let j = i; j < end; j++)
        if (src.charCodeAt(j) === 10) {
          line++;
          lineStart = j + 1;
        }
      i = end + 2;
      hasSpace = true;
      continue;
    }
    const col = i - lineStart + 1;
    if (isDigit(code) || (code === 46 && isDigit(src.charCodeAt(i + 1)))) {
      let j = i;
      while (j < n) {
        const d = src.charCodeAt(j);
        if (isIdentChar(d) || d === 46) j++;
        else if ((d === 43 || d === 45) && exponentBefore(src.slice(i, j))) j++;
        else break;
      }
      const text = src.slice(i, j);
      const t = token("num", text, line, col, atBol, hasSpace);
      const small = smallDecimal(text);
      if (small >= 0) {
        t.ival = BigInt(small);
        t.numType = "int";
      } else {
        const n = readNumber(text, { line, col });
        t.ival = n.ival;
        t.fval = n.fval;
        t.numType = n.numType;
      }
      push(t);
      i = j;
      continue;
    }
    if (isIdentStart(code)) {
      let j = i + 1;
      while (j < n && isIdentChar(src.charCodeAt(j))) j++;
      const text = src.slice(i, j);
      if (j - i <= 2) {
        if ((text === "L" || text === "u" || text === "U") && (src[j] === "'" || src[j] === '"')) {
          wide = { col };
          i = j;
          continue;
        }
        if (text === "u8" && src[j] === '"') {
          i = j;
          continue;
        }
      }
      push(token(KEYWORDS.has(text) ? "keyword" : "ident", text, line, col, atBol, hasSpace));
      i = j;
      continue;
    }
    const c = src[i]!;
    const start = wide ? wide.col : col;
    const isWide = wide !== null;
    wide = null;
    if (c === '"') {
      const bytes: number[] = [];
      const units: number[] = [];
      let j = i + 1;
      for (;;) {
        if (j >= n || src[j] === "\n")
          throw syntaxError("unterminated string literal", { line, col: start });
        const d = src[j]!;
        if (d === '"') break;
        if (d === "\\") {
          const [v, next] = readEscape(src, j + 1, { line, col: start });
          bytes.push(v);
          units.push(v);
          j = next;
        } else if (src.charCodeAt(j) < 128) {
          bytes.push(src.charCodeAt(j));
          units.push(src.charCodeAt(j));
          j++;
        } else {
          const ch = String.fromCodePoint(src.codePointAt(j)!);
          pushChar(bytes, ch);
          units.push(src.codePointAt(j)!);
          j += ch.length;
        }
      }
      const t = token("str", src.slice(i, j + 1), line, start, atBol, hasSpace);
      t.bytes = bytes;
      if (isWide) t.units = units;
      push(t);
      i = j + 1;
      continue;
    }
    if (c === "'") {
      let j = i + 1;
      let v: number;
      if (src[j] === "\\") [v, j] = readEscape(src, j + 1, { line, col: start });
      else if (j < n && src[j] !== "'" && src[j] !== "\n") {
        const bytes: number[] = [];
        const ch = String.fromCodePoint(src.codePointAt(j)!);
        pushChar(bytes, ch);
        v = isWide ? src.codePointAt(j)! : bytes[0]!;
        j += ch.length;
      } else throw syntaxError("empty character literal", { line, col: start });
      if (src[j] !== "'") throw syntaxError("unterminated character literal", { line, col: start });
      // Plain char is signed, so '\xff' is -1 as in gcc on x86; L'x' is a wchar_t (int).
      const signed = !isWide && v > 127 ? v - 256 : v;
      const t = token("num", src.slice(i, j + 1), line, start, atBol, hasSpace);
      t.ival = BigInt(signed);
      t.numType = "int";
      push(t);
      i = j + 1;
      continue;
    }
    if (c === "#" && src[i + 1] !== "#") {
      push(token("hash", "#", line, col, atBol, hasSpace));
      i++;
      continue;
    }
    const multi = multiPunct(src, i, c);
    if (multi) {
      push(token("punct", multi, line, col, atBol, hasSpace));
      i += multi.length;
      continue;
    }
    if (SINGLE_PUNCT.has(c)) {
      push(token("punct", c, line, col, atBol, hasSpace));
      i++;
      continue;
    }
    throw syntaxError(`unexpected character '${c}'`, { line, col: start });
  }
  tokens.push(token("eof", "", line, i - lineStart + 1, true, false));
  return tokens;
}
