// Stage 2: the preprocessor. Accepts #include of standard headers (their declarations are
// built in), expands object- and function-like #define macros, and evaluates #if/#ifdef.
import { syntaxError } from "./errors.js";
import { LayeredMap } from "./layered-map.js";
import { keepShape } from "./shapes.js";
import type { Token } from "./tokenize.js";
import { tokenize } from "./tokenize.js";

interface Macro {
  params?: string[];
  variadic?: boolean;
  body: Token[];
}

const STANDARD_HEADERS = new Set(
  (
    "stdio.h stdlib.h string.h math.h limits.h stdbool.h stdint.h stddef.h ctype.h assert.h " +
    "float.h stdarg.h inttypes.h time.h errno.h wchar.h iso646.h stdalign.h stdnoreturn.h"
  ).split(" "),
);

/** Macros that every program sees, whether or not it includes the header that defines them. */
const PREDEFINED = `
#define NULL ((void*)0)
#define true 1
#define false 0
#define EOF (-1)
#define EXIT_SUCCESS 0
#define EXIT_FAILURE 1
#define RAND_MAX 2147483647
#define CHAR_BIT 8
#define CHAR_MAX 127
#define CHAR_MIN (-128)
#define SCHAR_MAX 127
#define SCHAR_MIN (-128)
#define UCHAR_MAX 255
#define SHRT_MAX 32767
#define SHRT_MIN (-32768)
#define USHRT_MAX 65535
#define INT_MAX 2147483647
#define INT_MIN (-2147483647-1)
#define UINT_MAX 4294967295U
#define LONG_MAX 9223372036854775807L
#define LONG_MIN (-9223372036854775807L-1)
#define ULONG_MAX 18446744073709551615UL
#define LLONG_MAX 9223372036854775807LL
#define LLONG_MIN (-9223372036854775807LL-1)
#define ULLONG_MAX 18446744073709551615ULL
#define INT8_MAX 127
#define INT16_MAX 32767
#define INT32_MAX 2147483647
#define INT32_MIN (-2147483647-1)
#define UINT32_MAX 4294967295U
#define INT64_MAX 9223372036854775807LL
#define INT64_MIN (-9223372036854775807LL-1)
#define UINT64_MAX 18446744073709551615ULL
#define SIZE_MAX 18446744073709551615UL
#define M_PI 3.14159265358979323846
#define M_E 2.7182818284590452354
#define M_SQRT2 1.41421356237309504880
#define INFINITY (1.0/0.0)
#define HUGE_VAL (1.0/0.0)
#define NAN (0.0/0.0)
#define FLT_MAX 3.40282347e+38F
#define DBL_MAX 1.7976931348623157e+308
#define DBL_EPSILON 2.2204460492503131e-16
#define FLT_EPSILON 1.1920928955078125e-07F
#define __RUFFIAN__ 1
#define __attribute__(x)
#define __attribute(x)
#define __extension__
#define __inline inline
#define __inline__ inline
#define __restrict restrict
#define __restrict__ restrict
#define __const const
#define __volatile__ volatile
#define __signed__ signed
#define _Noreturn
#define stdin ((FILE *)0)
#define stdout ((FILE *)1)
#define stderr ((FILE *)2)
#define SEEK_SET 0
#define BUFSIZ 8192
#define __builtin_expect(x, y) (x)
#define __builtin_unreachable() ((void)0)
#define __builtin_offsetof(t, m) ((unsigned long)&((t *)0)->m)
#define offsetof(t, m) ((unsigned long)&((t *)0)->m)
#define __LP64__ 1
#define _LP64 1
#define __STDC__ 1
#define __STDC_VERSION__ 201112L
#define __STDC_HOSTED__ 1
#define PRId8 "d"
#define PRId16 "d"
#define PRId32 "d"
#define PRId64 "ld"
#define PRIi32 "i"
#define PRIi64 "li"
#define PRIu8 "u"
#define PRIu16 "u"
#define PRIu32 "u"
#define PRIu64 "lu"
#define PRIx32 "x"
#define PRIx64 "lx"
#define PRIX32 "X"
#define PRIX64 "lX"
#define INT8_MIN (-128)
#define INT16_MIN (-32768)
#define UINT8_MAX 255
#define UINT16_MAX 65535
#define WCHAR_MAX 2147483647
#define WCHAR_MIN (-2147483647-1)
`;

let predefinedCache: LayeredMap<string, Macro> | null = null;

function predefined(): LayeredMap<string, Macro> {
  if (!predefinedCache) {
    const p = new Preprocessor(new LayeredMap());
    p.run(tokenize(PREDEFINED));
    predefinedCache = p.macros;
  }
  return predefinedCache;
}

/** Runs the preprocessor over a token list (ending in eof) and returns the expanded tokens. */
export function preprocess(tokens: Token[]): Token[] {
  // A layer over the predefined macros: a block's #define and #undef stay in its own layer.
  return new Preprocessor(new LayeredMap(predefined())).run(tokens);
}

/** A token produced by expanding `name` at `at`: it may not expand `name` (or anything `at`
 * came out of) again, which is what stops mutually recursive macros. */
function hideAll(body: Token[], name: string, at: Token): Token[] {
  const base = new Set(at.hideset ?? []);
  base.add(name);
  return body.map((t) => {
    let hideset = base;
    if (t.hideset && t.hideset.size > 0) {
      hideset = new Set(base);
      for (const h of t.hideset) hideset.add(h);
    }
    return { ...t, line: at.line, col: at.col, hideset };
  });
}

/** The name in `<name>` or `"name"` (an #include's tokens, spelled together), or undefined.
 * (No regular expression: V8 drops a regexp's compiled code in garbage collections, and
 * compiling it again cost more than the rest of a block's preprocessing.) */
function includedName(header: string): string | undefined {
  const first = header.charCodeAt(0);
  const last = header.charCodeAt(header.length - 1);
  if (header.length < 3 || (first !== 60 && first !== 34) || (last !== 62 && last !== 34))
    return undefined;
  const name = header.slice(1, -1);
  return name.includes(">") || name.includes('"') ? undefined : name;
}

/** An open #if group: whether it is emitting, and whether any of its branches has been taken. */
interface ConditionalGroup {
  active: boolean;
  taken: boolean;
  at: Token;
}

/** Upper bound on tokens produced by macro expansion in one block (stops exponential bombs). */
const MAX_EXPANDED_TOKENS = 50_000;

class Preprocessor {
  private produced = 0;
  /** #pragma push_macro("name") stacks, per name (undefined: it was not defined). */
  private readonly pushed = new Map<string, (Macro | undefined)[]>();
  /** #line: what __LINE__ adds to a token's real line from here on. */
  private lineDelta = 0;
  constructor(readonly macros: LayeredMap<string, Macro>) {}

  run(input: Token[]): Token[] {
    const out: Token[] = [];
    const conds: ConditionalGroup[] = [];
    /** Whether text here is emitted: every open group is (recomputed after each conditional
     * directive, not per token). */
    let emitting = true;
    let i = 0;
    while (i < input.length) {
      const t = input[i]!;
      if (t.kind === "eof") break;
      if (t.kind === "hash" && t.atBol) {
        let j = i + 1;
        while (j < input.length && !input[j]!.atBol && input[j]!.kind !== "eof") j++;
        const line = input.slice(i + 1, j);
        i = j;
        const name = line[0]?.text ?? "";
        const rest = line.slice(1);
        if (this.conditional(name, rest, t, conds)) {
          emitting = conds.every((c) => c.active);
          continue;
        }
        if (!emitting) continue;
        switch (name) {
          case "":
            continue;
          case "include": {
            let header = "";
            for (const x of rest) header += x.text;
            const included = includedName(header);
            if (included === undefined)
              throw syntaxError('#include expects <header> or "header"', t);
            if (!STANDARD_HEADERS.has(included))
              throw syntaxError(
                `cannot include '${included}': only standard headers are available`,
                t,
              );
            continue;
          }
          case "define":
            this.define(rest, t);
            continue;
          case "undef":
            this.macros.delete(rest[0]?.text ?? "");
            continue;
          case "pragma":
            this.pragma(rest);
            continue;
          case "line": {
            const [num] = this.expand(rest);
            if (!num || num.kind !== "num" || num.ival === undefined)
              throw syntaxError("#line expects a line number", rest[0] ?? t);
            this.lineDelta = Number(num.ival) - (t.line + 1);
            continue;
          }
          case "error":
            throw syntaxError(`#error ${rest.map((x) => x.text).join(" ")}`, t);
          default:
            throw syntaxError(`unknown preprocessor directive '#${name}'`, line[0] ?? t);
        }
      }
      if (!emitting) {
        i++;
        continue;
      }
      if (this.mayExpand(t)) {
        // Expand from here to the next directive (text is expanded with the macros defined
        // at that point): a macro's arguments may run over the lines up to it.
        let end = i + 1;
        while (end < input.length && !(input[end]!.kind === "hash" && input[end]!.atBol)) end++;
        if (input[end - 1]!.kind === "eof") end--;
        this.expand(input, out, i, end);
        i = end;
        continue;
      }
      out.push(t);
      i++;
    }
    if (conds.length > 0) throw syntaxError("unterminated #if", conds[conds.length - 1]!.at);
    out.push(input[input.length - 1]!);
    return out;
  }

  /** Applies a conditional directive (#if, #ifdef, #ifndef, #elif, #else, #endif) at `t` to the
   * stack of groups; false for any other directive. */
  private conditional(name: string, rest: Token[], t: Token, conds: ConditionalGroup[]): boolean {
    const active = (): boolean => conds.every((c) => c.active);
    switch (name) {
      case "ifdef":
      case "ifndef": {
        const parentActive = active();
        const defined = this.macros.has(rest[0]?.text ?? "");
        const on = name === "ifdef" ? defined : !defined;
        conds.push({ active: parentActive && on, taken: on, at: t });
        if (!parentActive) conds[conds.length - 1]!.taken = true;
        return true;
      }
      case "if": {
        const parentActive = active();
        const on = parentActive ? this.evalCondition(rest, t) : false;
        conds.push({ active: on, taken: on || !parentActive, at: t });
        return true;
      }
      case "elif": {
        const c = conds[conds.length - 1];
        if (!c) throw syntaxError("#elif without #if", t);
        if (c.taken) c.active = false;
        else {
          c.active = true;
          const on = active() && this.evalCondition(rest, t);
          c.active = on;
          c.taken = on;
        }
        return true;
      }
      case "else": {
        const c = conds[conds.length - 1];
        if (!c) throw syntaxError("#else without #if", t);
        c.active = !c.taken;
        c.taken = true;
        return true;
      }
      case "endif":
        if (!conds.pop()) throw syntaxError("#endif without #if", t);
        return true;
      default:
        return false;
    }
  }

  /** Whether a token may start a macro expansion: a defined macro's name, or __LINE__ or
   * __FILE__. Most tokens are not, and go straight to the output. */
  private mayExpand(t: Token): boolean {
    if (t.kind !== "ident") {
      if (t.kind !== "keyword" || !this.macros.hasOwnEntries()) return false;
    } else if (t.text === "__LINE__" || t.text === "__FILE__") return true;
    return this.macros.get(t.text) !== undefined;
  }

  /** push_macro/pop_macro save and restore a definition; other pragmas are ignored. */
  private pragma(rest: Token[]): void {
    const kind = rest[0]?.text;
    if (kind !== "push_macro" && kind !== "pop_macro") return;
    if (rest[1]?.text !== "(" || rest[2]?.kind !== "str" || rest[3]?.text !== ")")
      throw syntaxError(`#pragma ${kind} expects ("name")`, rest[0]!);
    const name = Buffer.from(rest[2].bytes!).toString("utf8");
    const stack = this.pushed.get(name) ?? [];
    if (kind === "push_macro") {
      stack.push(this.macros.get(name));
      this.pushed.set(name, stack);
      return;
    }
    if (stack.length === 0) return;
    const saved = stack.pop();
    if (saved) this.macros.set(name, saved);
    else this.macros.delete(name);
  }

  private define(rest: Token[], at: Token): void {
    const nameTok = rest[0];
    if (!nameTok || (nameTok.kind !== "ident" && nameTok.kind !== "keyword"))
      throw syntaxError("macro name missing after #define", at);
    const next = rest[1];
    if (next && next.text === "(" && !next.hasSpace) {
      const params: string[] = [];
      let variadic = false;
      let k = 2;
      while (k < rest.length && rest[k]!.text !== ")") {
        const p = rest[k]!;
        if (p.text === "...") variadic = true;
        else if (p.kind === "ident") params.push(p.text);
        else if (p.text !== ",") throw syntaxError(`bad macro parameter '${p.text}'`, p);
        k++;
      }
      if (k >= rest.length) throw syntaxError("missing ')' in macro parameter list", at);
      this.macros.set(nameTok.text, { params, variadic, body: rest.slice(k + 1) });
    } else this.macros.set(nameTok.text, { body: rest.slice(1) });
  }

  /** Macro-expands a token list (no directives in it) until no macro is left to expand, and
   * appends the result to `out`. */
  expand(input: Token[], out: Token[] = [], from = 0, to = input.length): Token[] {
    // Expansions are pushed on a stack (next on top) read before the rest of the input, so an
    // expansion costs O(body) and the input itself is never copied.
    const stack: Token[] = [];
    let next = from;
    while (stack.length > 0 || next < to) {
      const t = stack.length > 0 ? stack.pop()! : input[next++]!;
      if (t.text === "__LINE__" && !this.macros.has("__LINE__")) {
        const n = t.line + this.lineDelta;
        out.push({ ...t, kind: "num", text: String(n), ival: BigInt(n), numType: "int" });
        continue;
      }
      if (t.text === "__FILE__" && !this.macros.has("__FILE__")) {
        out.push({ ...t, kind: "str", text: '"<input>"', bytes: [...Buffer.from("<input>")] });
        continue;
      }
      const m = t.kind === "ident" || t.kind === "keyword" ? this.macros.get(t.text) : undefined;
      if (!m || t.hideset?.has(t.text)) {
        out.push(t);
        continue;
      }
      const ahead =
        stack.length > 0 ? stack[stack.length - 1] : next < to ? input[next] : undefined;
      if (m.params && ahead?.text !== "(") {
        out.push(t);
        continue;
      }
      this.produced += m.body.length + 1;
      if (this.produced > MAX_EXPANDED_TOKENS)
        throw syntaxError(
          `macro expansion of '${t.text}' is too large (recursive or exponential macros?)`,
          t,
        );
      if (!m.params) {
        const body = hideAll(m.body, t.text, t);
        for (let k = body.length - 1; k >= 0; k--) stack.push(body[k]!);
        continue;
      }
      if (stack.length > 0)
        stack.pop(); // "("
      else next++;
      // Collect the arguments, split at top-level commas.
      const args: Token[][] = [[]];
      let depth = 0;
      let closed = false;
      let closing: Token | undefined;
      while (stack.length > 0 || next < to) {
        const a = stack.length > 0 ? stack.pop()! : input[next++]!;
        if (a.text === "(") depth++;
        else if (a.text === ")") {
          if (depth === 0) {
            closed = true;
            closing = a;
            break;
          }
          depth--;
        } else if (
          a.text === "," &&
          depth === 0 &&
          !(m.variadic && args.length > m.params.length)
        ) {
          args.push([]);
          continue;
        }
        args[args.length - 1]!.push(a);
      }
      if (!closed) throw syntaxError(`unterminated call to macro '${t.text}'`, t);
      // Prosser's rule: the expansion hides what both the name and the ')' came out of, so a
      // macro name produced by another expansion and called with source arguments expands.
      const rparenHides = closing?.hideset;
      const hides = new Set([...(t.hideset ?? [])].filter((h) => rparenHides?.has(h)));
      const site: Token = { ...t, hideset: hides };
      if (args.length === 1 && args[0]!.length === 0 && m.params.length === 0) args.pop();
      const want = m.params.length + (m.variadic ? 1 : 0);
      if (args.length !== want && !(m.variadic && args.length === m.params.length))
        throw syntaxError(
          `macro '${t.text}' takes ${m.params.length} argument(s), got ${args.length}`,
          t,
        );
      const body = hideAll(this.substitute(m, args, t), t.text, site);
      this.produced += body.length;
      if (this.produced > MAX_EXPANDED_TOKENS)
        throw syntaxError(
          `macro expansion of '${t.text}' is too large (recursive or exponential macros?)`,
          t,
        );
      for (let k = body.length - 1; k >= 0; k--) stack.push(body[k]!);
    }
    return out;
  }

  private substitute(m: Macro, args: Token[][], at: Token): Token[] {
    const params = m.params!;
    const argOf = (name: string): Token[] | undefined => {
      if (name === "__VA_ARGS__" && m.variadic) return args[params.length] ?? [];
      const k = params.indexOf(name);
      return k >= 0 ? args[k] : undefined;
    };
    const out: Token[] = [];
    const body = m.body;
    for (let k = 0; k < body.length; k++) {
      const b = body[k]!;
      if (b.kind === "hash") {
        const arg = argOf(body[k + 1]?.text ?? "");
        if (!arg) throw syntaxError("'#' is not followed by a macro parameter", b);
        const text = arg.map((x, n) => (n > 0 && x.hasSpace ? " " : "") + x.text).join("");
        out.push({ ...at, kind: "str", text: JSON.stringify(text), bytes: [...Buffer.from(text)] });
        k++;
        continue;
      }
      if (b.text === "##") {
        const left = out.pop();
        const nextTok = body[k + 1];
        k++;
        if (!left || !nextTok) throw syntaxError("'##' at the edge of a macro body", b);
        const right = argOf(nextTok.text) ?? [nextTok];
        const pasted = left.text + (right[0]?.text ?? "");
        const toks = tokenize(pasted);
        toks.pop();
        out.push(...toks.map((x) => ({ ...x, line: at.line, col: at.col })), ...right.slice(1));
        continue;
      }
      const arg = argOf(b.text);
      if (arg) {
        if (body[k + 1]?.text === "##") out.push(...arg);
        else out.push(...this.expand(arg));
      } else out.push(b);
    }
    return out;
  }

  private evalCondition(line: Token[], at: Token): boolean {
    const resolved: Token[] = [];
    for (let k = 0; k < line.length; k++) {
      const t = line[k]!;
      if (t.text === "defined") {
        let nameTok = line[k + 1];
        let skip = 1;
        if (nameTok?.text === "(") {
          nameTok = line[k + 2];
          skip = 3;
        }
        const v = this.macros.has(nameTok?.text ?? "") ? 1n : 0n;
        resolved.push({ ...t, kind: "num", text: String(v), ival: v, numType: "int" });
        k += skip;
      } else resolved.push(t);
    }
    const expanded = this.expand(resolved).map((t) =>
      t.kind === "ident" || t.kind === "keyword"
        ? { ...t, kind: "num" as const, ival: 0n, numType: "int" as const }
        : t,
    );
    const ev = new CondEval(expanded, at);
    const v = ev.expr();
    if (ev.pos < expanded.length)
      throw syntaxError("junk at end of #if expression", expanded[ev.pos]!);
    return v !== 0n;
  }
}

keepShape(new Preprocessor(new LayeredMap()));

/** Evaluates a preprocessor #if expression over integer constants. */
class CondEval {
  pos = 0;
  /** Inside an operand that short-circuiting skips: errors such as 0/0 do not count there. */
  private dead = 0;
  constructor(
    readonly toks: Token[],
    readonly at: Token,
  ) {}
  private peek(): string {
    return this.toks[this.pos]?.text ?? "";
  }
  expr(): bigint {
    const c = this.binary(0);
    if (this.peek() === "?") {
      this.pos++;
      const a = this.live(c !== 0n, () => this.expr());
      if (this.peek() !== ":") throw syntaxError("expected ':' in #if expression", this.at);
      this.pos++;
      const b = this.live(c === 0n, () => this.expr());
      return c !== 0n ? a : b;
    }
    return c;
  }
  private static readonly PREC: Record<string, number> = {
    "||": 1,
    "&&": 2,
    "|": 3,
    "^": 4,
    "&": 5,
    "==": 6,
    "!=": 6,
    "<": 7,
    ">": 7,
    "<=": 7,
    ">=": 7,
    "<<": 8,
    ">>": 8,
    "+": 9,
    "-": 9,
    "*": 10,
    "/": 10,
    "%": 10,
  };
  private binary(min: number): bigint {
    let l = this.unary();
    for (;;) {
      const op = this.peek();
      const p = CondEval.PREC[op];
      if (p === undefined || p <= min) return l;
      this.pos++;
      const skipped = (op === "&&" && l === 0n) || (op === "||" && l !== 0n);
      const r = this.live(!skipped, () => this.binary(p));
      const b = (x: boolean): bigint => (x ? 1n : 0n);
      switch (op) {
        case "||":
          l = b(l !== 0n || r !== 0n);
          break;
        case "&&":
          l = b(l !== 0n && r !== 0n);
          break;
        case "|":
          l = l | r;
          break;
        case "^":
          l = l ^ r;
          break;
        case "&":
          l = l & r;
          break;
        case "==":
          l = b(l === r);
          break;
        case "!=":
          l = b(l !== r);
          break;
        case "<":
          l = b(l < r);
          break;
        case ">":
          l = b(l > r);
          break;
        case "<=":
          l = b(l <= r);
          break;
        case ">=":
          l = b(l >= r);
          break;
        case "<<":
          l = l << r;
          break;
        case ">>":
          l = l >> r;
          break;
        case "+":
          l = l + r;
          break;
        case "-":
          l = l - r;
          break;
        case "*":
          l = l * r;
          break;
        case "/":
        case "%":
          if (r === 0n) {
            if (this.dead > 0) {
              l = 0n;
              break;
            }
            throw syntaxError("division by zero in #if", this.at);
          }
          l = op === "/" ? l / r : l % r;
          break;
      }
    }
  }
  private live(live: boolean, read: () => bigint): bigint {
    if (live) return read();
    this.dead++;
    try {
      return read();
    } finally {
      this.dead--;
    }
  }
  private unary(): bigint {
    const t = this.toks[this.pos];
    if (!t) throw syntaxError("incomplete #if expression", this.at);
    this.pos++;
    if (t.text === "!") return this.unary() === 0n ? 1n : 0n;
    if (t.text === "-") return -this.unary();
    if (t.text === "+") return this.unary();
    if (t.text === "~") return ~this.unary();
    if (t.text === "(") {
      const v = this.expr();
      if (this.peek() !== ")") throw syntaxError("expected ')' in #if expression", t);
      this.pos++;
      return v;
    }
    if (t.kind === "num" && t.ival !== undefined) return BigInt.asIntN(64, t.ival);
    throw syntaxError(`unexpected '${t.text}' in #if expression`, t);
  }
}
