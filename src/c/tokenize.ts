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
      while (j < i + 3 && digitValue(src.charCodeAt(j)) < 8)
        v = v * 8 + digitValue(src.charCodeAt(j++));
      return [v & 0xff, j];
    }
    case "x": {
      let j = i + 1;
      let v = 0;
      if (digitValue(src.charCodeAt(j)) >= 16) throw syntaxError("\\x used with no hex digits", at);
      while (digitValue(src.charCodeAt(j)) < 16) v = v * 16 + digitValue(src.charCodeAt(j++));
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
  // digits (0x hex, 0b binary, 0 octal, decimal), then a suffix of u and l or ll.
  let end = lower.length;
  while (end > 0 && (lower[end - 1] === "u" || lower[end - 1] === "l")) end--;
  const digits = lower.slice(0, end);
  const suffix = lower.slice(end);
  const prefixed = digits.startsWith("0x") || digits.startsWith("0b");
  const radix = prefixed
    ? digits[1] === "x"
      ? 16
      : 2
    : digits.length > 1 && digits[0] === "0"
      ? 8
      : 10;
  const body = prefixed ? digits.slice(2) : digits;
  let valid = body.length > 0 && INTEGER_SUFFIXES.has(suffix);
  for (let k = 0; k < body.length; k++) valid &&= digitValue(body.charCodeAt(k)) < radix;
  if (!valid) throw syntaxError(`invalid number '${text}'`, at);
  let v: bigint;
  if (digits.startsWith("0x") || digits.startsWith("0b")) v = BigInt(digits);
  else if (digits.length > 1 && digits.startsWith("0")) v = BigInt("0o" + digits.slice(1));
  else v = BigInt(digits);
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

const INTEGER_SUFFIXES: ReadonlySet<string> = new Set([
  "",
  "u",
  "ul",
  "ull",
  "l",
  "ll",
  "lu",
  "llu",
]);

/** The value of a digit in any base up to 16 (0-9, a-f, A-F), else 99. */
function digitValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  const lower = c | 32;
  return lower >= 97 && lower <= 102 ? lower - 87 : 99;
}

/** A sign continues the number src[start, end) only right after its exponent letter (1e-5,
 * 0x1p+3). */
function exponentBefore(src: string, start: number, end: number): boolean {
  const hex = src.charCodeAt(start) === 48 && (src.charCodeAt(start + 1) | 32) === 120;
  const last = src.charCodeAt(end - 1) | 32;
  return hex ? last === 112 : last === 101;
}

const isDigit = (c: number): boolean => c >= 48 && c <= 57;
const isIdentStart = (c: number): boolean =>
  (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c === 36;
const isIdentChar = (c: number): boolean => isIdentStart(c) || isDigit(c);

/** The punctuator at units[i], whose code is `c` (the longest that matches), or undefined. The
 * spellings are constants, so a punctuator token allocates no string. */
function punctuator(units: Uint16Array, i: number, c: number): string | undefined {
  const d = units[i + 1]!;
  switch (c) {
    case 40:
      return "(";
    case 41:
      return ")";
    case 123:
      return "{";
    case 125:
      return "}";
    case 91:
      return "[";
    case 93:
      return "]";
    case 59:
      return ";";
    case 44:
      return ",";
    case 58:
      return ":";
    case 63:
      return "?";
    case 126:
      return "~";
    case 43: // +
      return d === 43 ? "++" : d === 61 ? "+=" : "+";
    case 45: // -
      return d === 45 ? "--" : d === 61 ? "-=" : d === 62 ? "->" : "-";
    case 42: // *
      return d === 61 ? "*=" : "*";
    case 47: // /
      return d === 61 ? "/=" : "/";
    case 37: // %
      return d === 61 ? "%=" : "%";
    case 38: // &
      return d === 38 ? "&&" : d === 61 ? "&=" : "&";
    case 124: // |
      return d === 124 ? "||" : d === 61 ? "|=" : "|";
    case 94: // ^
      return d === 61 ? "^=" : "^";
    case 61: // =
      return d === 61 ? "==" : "=";
    case 33: // !
      return d === 61 ? "!=" : "!";
    case 60: // <
      if (d === 60) return units[i + 2] === 61 ? "<<=" : "<<";
      return d === 61 ? "<=" : "<";
    case 62: // >
      if (d === 62) return units[i + 2] === 61 ? ">>=" : ">>";
      return d === 61 ? ">=" : ">";
    case 46: // .
      return d === 46 && units[i + 2] === 46 ? "..." : ".";
    case 35: // # (a lone # is a "hash" token)
      return d === 35 ? "##" : undefined;
  }
  return undefined;
}

/** Identifier and keyword spellings seen before, by content. A block's names are mostly the
 * same few (i, n, printf, int), so reading one hashes its characters and allocates no string,
 * and the maps the parser looks names up in find the string's hash already computed. An open
 * addressing table of strings; past MAX_SPELLINGS entries it starts over, so a process that
 * reads millions of never-seen names holds a bounded table. */
const SPELLING_SLOTS = 8192;
const MAX_SPELLINGS = SPELLING_SLOTS / 2;
const spellings: (string | undefined)[] = new Array<string | undefined>(SPELLING_SLOTS).fill(
  undefined,
);
/** 1 where the spelling in the same slot is a keyword. */
const keywordSlot = new Uint8Array(SPELLING_SLOTS);
let spellingCount = 0;

const FNV_OFFSET = 2166136261;
const FNV_PRIME = 16777619;

/** One character's step of the spellings' hash (FNV-1a). */
const hashStep = (h: number, c: number): number => Math.imul(h ^ c, FNV_PRIME);

function spellingHash(src: string, start: number, end: number): number {
  let h = FNV_OFFSET;
  for (let k = start; k < end; k++) h = hashStep(h, src.charCodeAt(k));
  return h;
}

/** The slot holding the spelling src[start, end) (whose code units are `units`, with the same
 * indexes), whose hash is `hash`, entered if new. */
function spellingSlot(
  src: string,
  units: Uint16Array,
  start: number,
  end: number,
  hash: number,
): number {
  const length = end - start;
  for (let slot = hash & (SPELLING_SLOTS - 1); ; slot = (slot + 1) & (SPELLING_SLOTS - 1)) {
    const known = spellings[slot];
    if (known === undefined) {
      if (spellingCount >= MAX_SPELLINGS) {
        resetSpellings();
        return spellingSlot(src, units, start, end, hash);
      }
      spellings[slot] = canonical(src.slice(start, end));
      keywordSlot[slot] = 0;
      spellingCount++;
      return slot;
    }
    if (known.length === length && sameText(known, units, start)) return slot;
  }
}

/** The engine's own copy of `s`, the one every equal literal and property key shares (V8
 * internalizes property keys): comparing it with a literal such as "int" is then a pointer
 * test, and the maps the parser looks it up in find its hash computed. */
function canonical(s: string): string {
  return Object.keys({ [s]: 0 })[0]!;
}

function sameText(known: string, units: Uint16Array, start: number): boolean {
  for (let k = 0; k < known.length; k++) if (known.charCodeAt(k) !== units[start + k]) return false;
  return true;
}

function resetSpellings(): void {
  spellings.fill(undefined);
  spellingCount = 0;
  for (const kw of KEYWORDS)
    keywordSlot[
      spellingSlot(
        kw,
        Uint16Array.from(kw, (c) => c.charCodeAt(0)),
        0,
        kw.length,
        spellingHash(kw, 0, kw.length),
      )
    ] = 1;
}
resetSpellings();

/** BigInts of the small literals most code is made of (0, 1, 2, 10, 100), made once. */
const SMALL_BIGINTS: readonly bigint[] = Array.from({ length: 1024 }, (_, k) => BigInt(k));

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

/** Sources up to this many characters are read through one buffer that every call reuses. */
const REUSED_UNITS = 1 << 16;
let reusedUnits = new Uint16Array(4096);

/** The source's UTF-16 code units (indexes as the string's), with a 0 after the last, in a
 * buffer reused by every call (tokenize is not reentrant). Reading one is a load and a bounds
 * check, where charCodeAt also walks the string's representation: most sources are
 * concatenations (a model's pieces, a block with its loop bound replaced). */
function codeUnits(src: string): Uint16Array {
  const need = src.length + 1;
  let units = reusedUnits;
  if (need > units.length) {
    units = new Uint16Array(need);
    if (need <= REUSED_UNITS) reusedUnits = units;
  }
  Buffer.from(units.buffer, units.byteOffset, units.byteLength).write(src, 0, "utf16le");
  units[src.length] = 0;
  return units;
}

/** Tokenizes the whole source; a final eof token marks the end. */
export function tokenize(src: string): Token[] {
  const code16 = codeUnits(src);
  const tokens: Token[] = [];
  let i = 0;
  let line = 1;
  let lineStart = 0;
  let atBol = true;
  let hasSpace = false;
  const n = src.length;
  /** After an L/u/U prefix: the column of the prefix, where the wide literal that follows
   * starts (0: no prefix). */
  let wideCol = 0;
  while (i < n) {
    const code = code16[i];
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
      for (let d = code16[i]; d === 32 || d === 9; d = code16[++i]);
      hasSpace = true;
      continue;
    }
    if (code === 92 && code16[i + 1] === 10) {
      i += 2;
      line++;
      lineStart = i;
      continue;
    }
    if (code === 47 && code16[i + 1] === 47) {
      while (i < n && code16[i] !== 10) i++;
      hasSpace = true;
      continue;
    }
    if (code === 47 && code16[i + 1] === 42) {
      const start = { line, col: i - lineStart + 1 };
      const end = src.indexOf("*/", i + 2);
      if (end < 0) throw syntaxError("unterminated comment", start);
      for (let j = i; j < end; j++)
        if (code16[j] === 10) {
          line++;
          lineStart = j + 1;
        }
      i = end + 2;
      hasSpace = true;
      continue;
    }
    const col = i - lineStart + 1;
    let t: Token;
    if (isIdentStart(code)) {
      // The name's hash is taken as it is scanned (the 0 after the last unit ends a name).
      let hash = hashStep(FNV_OFFSET, code);
      let j = i + 1;
      for (let d = code16[j]; isIdentChar(d); d = code16[++j]) hash = hashStep(hash, d);
      if (j - i <= 2 && isLiteralPrefix(src, i, j)) {
        // L"…", u'…', u8"…": the literal starts at the prefix; u8 strings are plain ones.
        if (j - i === 1) wideCol = col;
        i = j;
        continue;
      }
      const slot = spellingSlot(src, code16, i, j, hash);
      t = token(
        keywordSlot[slot] ? "keyword" : "ident",
        spellings[slot]!,
        line,
        col,
        atBol,
        hasSpace,
      );
      i = j;
    } else if (isDigit(code) || (code === 46 && isDigit(code16[i + 1]))) {
      let j = i;
      while (j < n) {
        const d = code16[j];
        if (isIdentChar(d) || d === 46) j++;
        else if ((d === 43 || d === 45) && exponentBefore(src, i, j)) j++;
        else break;
      }
      const text = src.slice(i, j);
      t = token("num", text, line, col, atBol, hasSpace);
      const small = smallDecimal(text);
      if (small >= 0) {
        t.ival = small < SMALL_BIGINTS.length ? SMALL_BIGINTS[small] : BigInt(small);
        t.numType = "int";
      } else {
        const v = readNumber(text, { line, col });
        t.ival = v.ival;
        t.fval = v.fval;
        t.numType = v.numType;
      }
      i = j;
    } else if (code === 34 || code === 39) {
      const start = wideCol || col;
      const wide = wideCol !== 0;
      wideCol = 0;
      t =
        code === 34
          ? stringLiteral(src, i, line, start, wide)
          : charLiteral(src, i, line, start, wide);
      t.atBol = atBol;
      t.hasSpace = hasSpace;
      i += t.text.length;
    } else {
      const p = punctuator(code16, i, code);
      if (p !== undefined) t = token("punct", p, line, col, atBol, hasSpace);
      else if (code === 35) t = token("hash", "#", line, col, atBol, hasSpace);
      else throw syntaxError(`unexpected character '${src[i]}'`, { line, col: wideCol || col });
      i += t.text.length;
    }
    tokens.push(t);
    atBol = false;
    hasSpace = false;
  }
  tokens.push(token("eof", "", line, i - lineStart + 1, true, false));
  return tokens;
}

/** Whether the identifier src[i, j) is a literal's prefix: L, u or U before a quote, or u8
 * before a double quote. */
function isLiteralPrefix(src: string, i: number, j: number): boolean {
  const q = src.charCodeAt(j);
  if (q !== 34 && q !== 39) return false;
  const c = src.charCodeAt(i);
  if (j - i === 1) return c === 76 || c === 117 || c === 85;
  return c === 117 && src.charCodeAt(i + 1) === 56 && q === 34;
}

/** The string literal at src[i] (a double quote): its bytes, and its code points when wide. */
function stringLiteral(src: string, i: number, line: number, col: number, wide: boolean): Token {
  const bytes: number[] = [];
  const units: number[] = [];
  const n = src.length;
  let j = i + 1;
  for (;;) {
    const d = j < n ? src.charCodeAt(j) : 10;
    if (d === 10) throw syntaxError("unterminated string literal", { line, col });
    if (d === 34) break;
    if (d === 92) {
      const [v, next] = readEscape(src, j + 1, { line, col });
      bytes.push(v);
      if (wide) units.push(v);
      j = next;
    } else if (d < 128) {
      bytes.push(d);
      if (wide) units.push(d);
      j++;
    } else {
      const ch = String.fromCodePoint(src.codePointAt(j)!);
      pushChar(bytes, ch);
      if (wide) units.push(src.codePointAt(j)!);
      j += ch.length;
    }
  }
  const t = token("str", src.slice(i, j + 1), line, col, false, false);
  t.bytes = bytes;
  if (wide) t.units = units;
  return t;
}

/** The character literal at src[i] (a single quote): an int. */
function charLiteral(src: string, i: number, line: number, col: number, wide: boolean): Token {
  const n = src.length;
  let j = i + 1;
  let v: number;
  if (src[j] === "\\") [v, j] = readEscape(src, j + 1, { line, col });
  else if (j < n && src[j] !== "'" && src[j] !== "\n") {
    const bytes: number[] = [];
    const ch = String.fromCodePoint(src.codePointAt(j)!);
    pushChar(bytes, ch);
    v = wide ? src.codePointAt(j)! : bytes[0]!;
    j += ch.length;
  } else throw syntaxError("empty character literal", { line, col });
  if (src[j] !== "'") throw syntaxError("unterminated character literal", { line, col });
  // Plain char is signed, so '\xff' is -1 as in gcc on x86; L'x' is a wchar_t (int).
  const signed = !wide && v > 127 ? v - 256 : v;
  const t = token("num", src.slice(i, j + 1), line, col, false, false);
  t.ival = BigInt(signed);
  t.numType = "int";
  return t;
}
