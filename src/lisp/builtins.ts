// The primitive procedures: numbers (exact bigint integers and floats), lists, strings, output,
// and the higher-order ones (map, filter, folds, apply), which call back into Lisp through
// CallRequest so the evaluator, not JavaScript recursion, runs the calls.
import { integerTooLarge, runtimeError, typeError, LispError } from "./errors.js";
import { printValue } from "./printer.js";
import {
  Builtin,
  CallRequest,
  NIL,
  Pair,
  Sym,
  sym,
  UNSPECIFIED,
  arrayToList,
  isProcedure,
  listToArray,
  type BuiltinContext,
  type Value,
} from "./values.js";

type Num = bigint | number;
type Impl = (args: Value[], ctx: BuiltinContext) => Value | CallRequest;

const PAIR_BYTES = 32;

function show(v: Value): string {
  return printValue(v, "write", 60);
}

function expected(who: string, what: string, got: Value): LispError {
  return typeError(`${who}: expected ${what}, got ${show(got)}`);
}

function isNum(v: Value): v is Num {
  return typeof v === "bigint" || typeof v === "number";
}

function num(who: string, v: Value): Num {
  if (typeof v === "bigint" || typeof v === "number") return v;
  throw expected(who, "a number", v);
}

function int(who: string, v: Value): bigint {
  if (typeof v === "bigint") return v;
  throw expected(who, "an exact integer", v);
}

/** A non-negative exact integer small enough to be an index or count. */
function index(who: string, v: Value): number {
  if (typeof v === "bigint" && v >= 0n && v <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(v);
  throw expected(who, "a non-negative exact integer", v);
}

function str(who: string, v: Value): string {
  if (typeof v === "string") return v;
  throw expected(who, "a string", v);
}

function pair(who: string, v: Value): Pair {
  if (v instanceof Pair) return v;
  throw expected(who, "a pair", v);
}

function proc(who: string, v: Value): Value {
  if (isProcedure(v)) return v;
  throw expected(who, "a procedure", v);
}

/** The elements of a proper list; charges one step per element. */
function items(who: string, v: Value, ctx: BuiltinContext): Value[] {
  const found = listToArray(v);
  if (found === null) throw expected(who, "a list", v);
  ctx.charge(found.length);
  return found;
}

function toFloat(n: Num): number {
  return typeof n === "number" ? n : Number(n);
}

function add(a: Num, b: Num, ctx: BuiltinContext): Num {
  if (typeof a === "bigint" && typeof b === "bigint") return ctx.checkInteger(a + b);
  return toFloat(a) + toFloat(b);
}

function sub(a: Num, b: Num, ctx: BuiltinContext): Num {
  if (typeof a === "bigint" && typeof b === "bigint") return ctx.checkInteger(a - b);
  return toFloat(a) - toFloat(b);
}

function mul(a: Num, b: Num, ctx: BuiltinContext): Num {
  if (typeof a === "bigint" && typeof b === "bigint") return ctx.checkInteger(a * b);
  return toFloat(a) * toFloat(b);
}

function divide(a: Num, b: Num): Num {
  if (b === 0n) throw runtimeError("division by zero");
  if (typeof a === "bigint" && typeof b === "bigint") {
    // No rationals: an exact quotient stays exact, anything else becomes a float.
    return a % b === 0n ? a / b : Number(a) / Number(b);
  }
  return toFloat(a) / toFloat(b);
}

function bitLength(n: bigint): number {
  if (n < 0n) n = -n;
  if (n === 0n) return 0;
  const hex = n.toString(16);
  return (hex.length - 1) * 4 + parseInt(hex[0], 16).toString(2).length;
}

type IntegerDivision = "quotient" | "remainder" | "modulo";

function integerDivision(who: string, kind: IntegerDivision, a: Value, b: Value): Num {
  const x = num(who, a);
  const y = num(who, b);
  if (typeof x === "bigint" && typeof y === "bigint") {
    if (y === 0n) throw runtimeError("division by zero");
    if (kind === "quotient") return x / y;
    const r = x % y;
    if (kind === "modulo" && r !== 0n && r < 0n !== y < 0n) return r + y;
    return r;
  }
  const fx = toFloat(x);
  const fy = toFloat(y);
  if (!Number.isInteger(fx)) throw expected(who, "an integer", a);
  if (!Number.isInteger(fy)) throw expected(who, "an integer", b);
  if (fy === 0) throw runtimeError("division by zero");
  if (kind === "quotient") return Math.trunc(fx / fy);
  const r = fx % fy;
  if (kind === "modulo" && r !== 0 && r < 0 !== fy < 0) return r + fy;
  return r;
}

function integerSqrt(n: bigint): bigint {
  if (n < 2n) return n;
  let x = BigInt(Math.floor(Math.sqrt(Number(n))));
  // Newton steps correct the float estimate for numbers beyond 2^53.
  for (;;) {
    const y = (x + n / x) >> 1n;
    if (y >= x) {
      while (x * x > n) x--;
      while ((x + 1n) * (x + 1n) <= n) x++;
      return x;
    }
    x = y;
  }
}

function gcd(a: bigint, b: bigint): bigint {
  a = a < 0n ? -a : a;
  b = b < 0n ? -b : b;
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 ? 2 * Math.round(x / 2) : r;
}

export function isEqv(a: Value, b: Value): boolean {
  return a === b || (typeof a === "number" && typeof b === "number" && Object.is(a, b));
}

/** Structural equality, iterative so long or deep structures cannot overflow the JS stack.
 * Charges a step per pair compared, so comparing cyclic structures ends at the step limit. */
export function isEqual(a: Value, b: Value, ctx: BuiltinContext): boolean {
  const work: Value[] = [a, b];
  let pairs = 0;
  while (work.length > 0) {
    const y = work.pop()!;
    const x = work.pop()!;
    if (isEqv(x, y)) continue;
    if (x instanceof Pair && y instanceof Pair) {
      if (++pairs === 1024) {
        ctx.charge(pairs);
        pairs = 0;
      }
      work.push(x.cdr, y.cdr, x.car, y.car);
      continue;
    }
    return false;
  }
  return true;
}

function compareChain(who: string, test: (a: Num, b: Num) => boolean): Impl {
  return (args) => {
    if (args.length === 2) {
      const a = args[0];
      const b = args[1];
      if (typeof a === "bigint" && typeof b === "bigint") return test(a, b);
    }
    let prev = num(who, args[0]);
    let result = true;
    for (let i = 1; i < args.length; i++) {
      const next = num(who, args[i]);
      if (result && !test(prev, next)) result = false;
      prev = next;
    }
    return result;
  };
}

function stringCompare(who: string, test: (a: string, b: string) => boolean): Impl {
  return (args) => {
    for (let i = 0; i + 1 < args.length; i++) {
      if (!test(str(who, args[i]), str(who, args[i + 1]))) return false;
    }
    if (args.length === 1) str(who, args[0]);
    return true;
  };
}

function floatFunction(who: string, f: (x: number) => number): Impl {
  return (args) => f(toFloat(num(who, args[0])));
}

function rounding(who: string, f: (x: number) => number): Impl {
  return (args) => {
    const x = num(who, args[0]);
    return typeof x === "bigint" ? x : f(x);
  };
}

type Sameness = (a: Value, b: Value, ctx: BuiltinContext) => boolean;

function member(who: string, same: Sameness): Impl {
  return (args, ctx) => {
    let cur = args[1];
    while (cur instanceof Pair) {
      ctx.charge(1);
      if (same(args[0], cur.car, ctx)) return cur;
      cur = cur.cdr;
    }
    if (cur !== NIL) throw expected(who, "a list", args[1]);
    return false;
  };
}

function assoc(who: string, same: Sameness): Impl {
  return (args, ctx) => {
    let cur = args[1];
    while (cur instanceof Pair) {
      ctx.charge(1);
      const entry = cur.car;
      if (!(entry instanceof Pair)) throw expected(who, "a list of pairs", args[1]);
      if (same(args[0], entry.car, ctx)) return entry;
      cur = cur.cdr;
    }
    if (cur !== NIL) throw expected(who, "a list", args[1]);
    return false;
  };
}

/** car/cdr compositions such as cadr: the letters between c and r, applied right to left. */
function cxr(name: string): Impl {
  const path = name.slice(1, -1).split("").reverse();
  return (args) => {
    let v = args[0];
    for (const step of path) {
      if (!(v instanceof Pair)) throw expected(name, "a pair", args[0]);
      v = step === "a" ? v.car : v.cdr;
    }
    return v;
  };
}

function appendLists(who: string, lists: Value[], ctx: BuiltinContext): Value {
  if (lists.length === 0) return NIL;
  let result = lists[lists.length - 1];
  for (let k = lists.length - 2; k >= 0; k--) {
    const elements = items(who, lists[k], ctx);
    ctx.allocate(PAIR_BYTES * elements.length);
    result = arrayToList(elements, result);
  }
  return result;
}

function errorMessage(args: Value[]): string {
  const [first, ...rest] = args;
  const head = typeof first === "string" ? first : show(first);
  return [head, ...rest.map(show)].join(" ");
}

/** Calls `f` on each index 0..n-1 (arguments from `argsAt`), collecting the results. */
function mapIndices(
  f: Value,
  n: number,
  argsAt: (i: number) => Value[],
  finish: (results: Value[]) => Value,
): Value | CallRequest {
  const results: Value[] = [];
  const next = (): Value | CallRequest =>
    results.length === n
      ? finish(results)
      : new CallRequest(f, argsAt(results.length), collect, results);
  const collect = (v: Value): Value | CallRequest => {
    results.push(v);
    return next();
  };
  return next();
}

/** Left fold: acc = f(...step(element, acc)) over the elements, in order. */
function fold(
  f: Value,
  elements: Value[],
  init: Value,
  argsOf: (element: Value, acc: Value) => Value[],
): Value | CallRequest {
  let i = 0;
  let acc = init;
  const next = (): Value | CallRequest =>
    i === elements.length ? acc : new CallRequest(f, argsOf(elements[i], acc), step, [acc]);
  const step = (v: Value): Value | CallRequest => {
    acc = v;
    i++;
    return next();
  };
  return next();
}

/** Stable bottom-up merge sort whose comparisons are Lisp calls made by the evaluator. */
function mergeSort(
  elements: Value[],
  less: Value,
  finish: (sorted: Value[]) => Value,
): Value | CallRequest {
  const n = elements.length;
  let src = elements.slice();
  let dst = new Array<Value>(n);
  let width = 1;
  // The run being merged: left is src[i..mid), right is src[j..hi), output goes to dst[k..).
  let lo = 0;
  let mid = 0;
  let hi = 0;
  let i = 0;
  let j = 0;
  let k = 0;
  const startRun = (): void => {
    mid = Math.min(lo + width, n);
    hi = Math.min(lo + 2 * width, n);
    i = lo;
    j = mid;
    k = lo;
  };
  const next = (): Value | CallRequest => {
    for (;;) {
      if (width >= n) return finish(src);
      if (i < mid && j < hi) {
        return new CallRequest(less, [src[j], src[i]], compared, [src, dst] as unknown as Value[]);
      }
      while (i < mid) dst[k++] = src[i++];
      while (j < hi) dst[k++] = src[j++];
      lo += 2 * width;
      if (lo >= n) {
        [src, dst] = [dst, src];
        width *= 2;
        lo = 0;
      }
      startRun();
    }
  };
  const compared = (rightFirst: Value): Value | CallRequest => {
    dst[k++] = rightFirst !== false ? src[j++] : src[i++];
    return next();
  };
  startRun();
  return next();
}

/** Builds every primitive; the session binds each under its name. */
export function createBuiltins(): Builtin[] {
  const all: Builtin[] = [];
  const def = (name: string, min: number, max: number, fn: Impl): Builtin => {
    const b = new Builtin(name, min, max, fn);
    all.push(b);
    return b;
  };

  // Arithmetic.
  // Two exact integers is by far the commonest call, so it skips the general loop.
  def("+", 0, -1, (args, ctx) => {
    if (args.length === 2) {
      const a = args[0];
      const b = args[1];
      if (typeof a === "bigint" && typeof b === "bigint") return ctx.checkInteger(a + b);
    }
    let acc: Num = 0n;
    for (const a of args) acc = add(acc, num("+", a), ctx);
    return acc;
  });
  def("*", 0, -1, (args, ctx) => {
    let acc: Num = 1n;
    for (const a of args) acc = mul(acc, num("*", a), ctx);
    return acc;
  });
  def("-", 1, -1, (args, ctx) => {
    if (args.length === 2) {
      const a = args[0];
      const b = args[1];
      if (typeof a === "bigint" && typeof b === "bigint") return ctx.checkInteger(a - b);
    }
    const first = num("-", args[0]);
    if (args.length === 1) return sub(0n, first, ctx);
    let acc = first;
    for (let i = 1; i < args.length; i++) acc = sub(acc, num("-", args[i]), ctx);
    return acc;
  });
  def("/", 1, -1, (args) => {
    const first = num("/", args[0]);
    if (args.length === 1) return divide(1n, first);
    let acc = first;
    for (let i = 1; i < args.length; i++) acc = divide(acc, num("/", args[i]));
    return acc;
  });
  def("quotient", 2, 2, (a) => integerDivision("quotient", "quotient", a[0], a[1]));
  def("remainder", 2, 2, (a) => integerDivision("remainder", "remainder", a[0], a[1]));
  def("modulo", 2, 2, (a) => integerDivision("modulo", "modulo", a[0], a[1]));
  def("mod", 2, 2, (a) => integerDivision("mod", "modulo", a[0], a[1]));
  def("abs", 1, 1, (a) => {
    const x = num("abs", a[0]);
    return typeof x === "bigint" ? (x < 0n ? -x : x) : Math.abs(x);
  });
  const extreme = (who: string, pick: (a: Num, b: Num) => boolean): Impl => {
    return (args) => {
      let best = num(who, args[0]);
      let inexact = typeof best === "number";
      for (let i = 1; i < args.length; i++) {
        const x = num(who, args[i]);
        if (typeof x === "number") inexact = true;
        if (pick(x, best)) best = x;
      }
      return inexact ? toFloat(best) : best;
    };
  };
  def(
    "min",
    1,
    -1,
    extreme("min", (a, b) => a < b),
  );
  def(
    "max",
    1,
    -1,
    extreme("max", (a, b) => a > b),
  );
  def("gcd", 0, -1, (args) => args.reduce<bigint>((g, a) => gcd(g, int("gcd", a)), 0n));
  def("lcm", 0, -1, (args, ctx) =>
    args.reduce<bigint>((l, a) => {
      const x = int("lcm", a);
      if (x === 0n || l === 0n) return 0n;
      const r = ctx.checkInteger((l * x) / gcd(l, x));
      return r < 0n ? -r : r;
    }, 1n),
  );
  def("expt", 2, 2, (args, ctx) => {
    const base = num("expt", args[0]);
    const power = num("expt", args[1]);
    if (typeof base === "bigint" && typeof power === "bigint" && power >= 0n) {
      if (base === 0n || base === 1n) return power === 0n ? 1n : base;
      if (base === -1n) return power % 2n === 0n ? 1n : -1n;
      // The result has at least this many bits: refuse before computing, not after.
      const minimumBits = BigInt(bitLength(base) - 1) * power + 1n;
      if (minimumBits > BigInt(ctx.maxIntegerBits)) throw integerTooLarge(ctx.maxIntegerBits);
      return ctx.checkInteger(base ** power);
    }
    return Math.pow(toFloat(base), toFloat(power));
  });
  def("square", 1, 1, (a, ctx) => {
    const x = num("square", a[0]);
    return mul(x, x, ctx);
  });
  def("sqrt", 1, 1, (a) => {
    const x = num("sqrt", a[0]);
    if (typeof x === "bigint" && x >= 0n) {
      const r = integerSqrt(x);
      if (r * r === x) return r;
    }
    return Math.sqrt(toFloat(x));
  });
  def("exact-integer-sqrt", 1, 1, (a) => {
    const x = int("exact-integer-sqrt", a[0]);
    if (x < 0n) throw expected("exact-integer-sqrt", "a non-negative integer", a[0]);
    return integerSqrt(x);
  });
  def("exp", 1, 1, floatFunction("exp", Math.exp));
  def("log", 1, 2, (a) => {
    const x = toFloat(num("log", a[0]));
    return a.length === 2 ? Math.log(x) / Math.log(toFloat(num("log", a[1]))) : Math.log(x);
  });
  def("sin", 1, 1, floatFunction("sin", Math.sin));
  def("cos", 1, 1, floatFunction("cos", Math.cos));
  def("tan", 1, 1, floatFunction("tan", Math.tan));
  def("asin", 1, 1, floatFunction("asin", Math.asin));
  def("acos", 1, 1, floatFunction("acos", Math.acos));
  def("atan", 1, 2, (a) =>
    a.length === 2
      ? Math.atan2(toFloat(num("atan", a[0])), toFloat(num("atan", a[1])))
      : Math.atan(toFloat(num("atan", a[0]))),
  );
  def("floor", 1, 1, rounding("floor", Math.floor));
  def("ceiling", 1, 1, rounding("ceiling", Math.ceil));
  def("truncate", 1, 1, rounding("truncate", Math.trunc));
  def("round", 1, 1, rounding("round", roundHalfEven));
  const toExact = (who: string): Impl => {
    return (a) => {
      const x = num(who, a[0]);
      if (typeof x === "bigint") return x;
      if (!Number.isInteger(x)) {
        throw runtimeError(`${who}: ${show(x)} has no exact integer representation`);
      }
      return BigInt(x);
    };
  };
  def("exact", 1, 1, toExact("exact"));
  def("inexact->exact", 1, 1, toExact("inexact->exact"));
  def("inexact", 1, 1, (a) => toFloat(num("inexact", a[0])));
  def("exact->inexact", 1, 1, (a) => toFloat(num("exact->inexact", a[0])));

  // Numeric predicates and comparison.
  def("number?", 1, 1, (a) => isNum(a[0]));
  def("integer?", 1, 1, (a) => typeof a[0] === "bigint" || Number.isInteger(a[0]));
  def("exact?", 1, 1, (a) => typeof num("exact?", a[0]) === "bigint");
  def("inexact?", 1, 1, (a) => typeof num("inexact?", a[0]) === "number");
  def("float?", 1, 1, (a) => typeof a[0] === "number");
  def("zero?", 1, 1, (a) => num("zero?", a[0]) == 0);
  def("positive?", 1, 1, (a) => num("positive?", a[0]) > 0);
  def("negative?", 1, 1, (a) => num("negative?", a[0]) < 0);
  def("odd?", 1, 1, (a) => int("odd?", a[0]) % 2n !== 0n);
  def("even?", 1, 1, (a) => int("even?", a[0]) % 2n === 0n);
  def(
    "=",
    1,
    -1,
    compareChain("=", (a, b) => a == b),
  );
  def(
    "<",
    1,
    -1,
    compareChain("<", (a, b) => a < b),
  );
  def(
    ">",
    1,
    -1,
    compareChain(">", (a, b) => a > b),
  );
  def(
    "<=",
    1,
    -1,
    compareChain("<=", (a, b) => a <= b),
  );
  def(
    ">=",
    1,
    -1,
    compareChain(">=", (a, b) => a >= b),
  );
  def("number->string", 1, 2, (a) => {
    const x = num("number->string", a[0]);
    const radix = a.length === 2 ? index("number->string", a[1]) : 10;
    if (![2, 8, 10, 16].includes(radix))
      throw expected("number->string", "radix 2, 8, 10 or 16", a[1]);
    return typeof x === "bigint" ? x.toString(radix) : printValue(x, "display");
  });
  def("string->number", 1, 1, (a) => {
    const text = str("string->number", a[0]).trim();
    if (/^[+-]?\d+$/.test(text)) return BigInt(text);
    if (/^[+-]?(\d+\.\d*|\.\d+|\d+)(e[+-]?\d+)?$/i.test(text)) return Number(text);
    return false;
  });

  // Booleans and equality.
  def("not", 1, 1, (a) => a[0] === false);
  def("boolean?", 1, 1, (a) => typeof a[0] === "boolean");
  def("eq?", 2, 2, (a) => isEqv(a[0], a[1]));
  def("eqv?", 2, 2, (a) => isEqv(a[0], a[1]));
  def("equal?", 2, 2, (a, ctx) => isEqual(a[0], a[1], ctx));

  // Pairs and lists.
  def("cons", 2, 2, (a, ctx) => {
    ctx.allocate(PAIR_BYTES);
    return new Pair(a[0], a[1]);
  });
  def("car", 1, 1, (a) => pair("car", a[0]).car);
  def("cdr", 1, 1, (a) => pair("cdr", a[0]).cdr);
  for (const name of [
    "caar",
    "cadr",
    "cdar",
    "cddr",
    "caddr",
    "cdddr",
    "caadr",
    "cddar",
    "cadar",
  ]) {
    def(name, 1, 1, cxr(name));
  }
  def("set-car!", 2, 2, (a) => {
    pair("set-car!", a[0]).car = a[1];
    return UNSPECIFIED;
  });
  def("set-cdr!", 2, 2, (a) => {
    pair("set-cdr!", a[0]).cdr = a[1];
    return UNSPECIFIED;
  });
  def("list", 0, -1, (a, ctx) => {
    ctx.allocate(PAIR_BYTES * a.length);
    return arrayToList(a);
  });
  def("null?", 1, 1, (a) => a[0] === NIL);
  def("pair?", 1, 1, (a) => a[0] instanceof Pair);
  def("list?", 1, 1, (a) => listToArray(a[0]) !== null);
  def("length", 1, 1, (a, ctx) => BigInt(items("length", a[0], ctx).length));
  def("append", 0, -1, (a, ctx) => appendLists("append", a, ctx));
  def("reverse", 1, 1, (a, ctx) => {
    const elements = items("reverse", a[0], ctx);
    ctx.allocate(PAIR_BYTES * elements.length);
    return arrayToList(elements.reverse());
  });
  def("list-tail", 2, 2, (a, ctx) => {
    const k = index("list-tail", a[1]);
    let cur = a[0];
    for (let i = 0; i < k; i++) {
      if (!(cur instanceof Pair)) {
        throw runtimeError(`list-tail: index ${k} is out of range for ${show(a[0])}`);
      }
      cur = cur.cdr;
    }
    ctx.charge(k);
    return cur;
  });
  def("list-ref", 2, 2, (a, ctx) => {
    const elements = items("list-ref", a[0], ctx);
    const k = index("list-ref", a[1]);
    if (k >= elements.length) {
      throw runtimeError(
        `list-ref: index ${k} is out of range for a list of length ${elements.length}`,
      );
    }
    return elements[k];
  });
  def("list-copy", 1, 1, (a, ctx) => {
    const elements = items("list-copy", a[0], ctx);
    ctx.allocate(PAIR_BYTES * elements.length);
    return arrayToList(elements);
  });
  def("last-pair", 1, 1, (a, ctx) => {
    let cur = pair("last-pair", a[0]);
    while (cur.cdr instanceof Pair) {
      ctx.charge(1);
      cur = cur.cdr;
    }
    return cur;
  });
  def("iota", 1, 3, (a, ctx) => {
    const count = index("iota", a[0]);
    const start = a.length > 1 ? num("iota", a[1]) : 0n;
    const step = a.length > 2 ? num("iota", a[2]) : 1n;
    ctx.charge(count);
    ctx.allocate(PAIR_BYTES * count);
    const out: Value[] = [];
    let x = start;
    for (let i = 0; i < count; i++, x = add(x, step, ctx)) out.push(x);
    return arrayToList(out);
  });
  def("memq", 2, 2, member("memq", isEqv));
  const memv = def("memv", 2, 2, member("memv", isEqv));
  def("member", 2, 2, member("member", isEqual));
  def("assq", 2, 2, assoc("assq", isEqv));
  def("assv", 2, 2, assoc("assv", isEqv));
  def("assoc", 2, 2, assoc("assoc", isEqual));

  // Higher-order procedures.
  def("apply", 2, -1, (a, ctx) => {
    const f = proc("apply", a[0]);
    const spread = items("apply", a[a.length - 1], ctx);
    return new CallRequest(f, [...a.slice(1, -1), ...spread], null);
  });
  def("map", 2, -1, (a, ctx) => {
    const f = proc("map", a[0]);
    const lists = a.slice(1).map((l) => items("map", l, ctx));
    const n = Math.min(...lists.map((l) => l.length));
    return mapIndices(
      f,
      n,
      (i) => lists.map((l) => l[i]),
      (results) => {
        ctx.allocate(PAIR_BYTES * results.length);
        return arrayToList(results);
      },
    );
  });
  def("for-each", 2, -1, (a, ctx) => {
    const f = proc("for-each", a[0]);
    const lists = a.slice(1).map((l) => items("for-each", l, ctx));
    const n = Math.min(...lists.map((l) => l.length));
    return mapIndices(
      f,
      n,
      (i) => lists.map((l) => l[i]),
      () => UNSPECIFIED,
    );
  });
  def("filter", 2, 2, (a, ctx) => {
    const f = proc("filter", a[0]);
    const elements = items("filter", a[1], ctx);
    return mapIndices(
      f,
      elements.length,
      (i) => [elements[i]],
      (keep) => {
        const kept = elements.filter((_, i) => keep[i] !== false);
        ctx.allocate(PAIR_BYTES * kept.length);
        return arrayToList(kept);
      },
    );
  });
  def("sort", 2, 2, (a, ctx) => {
    // Both argument orders are common: (sort list less?) and (sort less? list).
    const [listArg, lessArg] =
      isProcedure(a[0]) && !isProcedure(a[1]) ? [a[1], a[0]] : [a[0], a[1]];
    const less = proc("sort", lessArg);
    const elements = items("sort", listArg, ctx);
    return mergeSort(elements, less, (sorted) => {
      ctx.allocate(PAIR_BYTES * sorted.length);
      return arrayToList(sorted);
    });
  });
  def("foldl", 3, 3, (a, ctx) =>
    fold(proc("foldl", a[0]), items("foldl", a[2], ctx), a[1], (x, acc) => [x, acc]),
  );
  def("fold-left", 3, 3, (a, ctx) =>
    fold(proc("fold-left", a[0]), items("fold-left", a[2], ctx), a[1], (x, acc) => [acc, x]),
  );
  const foldRight = (who: string): Impl => {
    return (a, ctx) =>
      fold(proc(who, a[0]), items(who, a[2], ctx).reverse(), a[1], (x, acc) => [x, acc]);
  };
  def("foldr", 3, 3, foldRight("foldr"));
  def("fold-right", 3, 3, foldRight("fold-right"));
  def("reduce", 3, 3, (a, ctx) => {
    const f = proc("reduce", a[0]);
    const elements = items("reduce", a[2], ctx);
    if (elements.length === 0) return a[1];
    return fold(f, elements.slice(1), elements[0], (x, acc) => [x, acc]);
  });

  // Strings and symbols.
  def("string?", 1, 1, (a) => typeof a[0] === "string");
  def("symbol?", 1, 1, (a) => a[0] instanceof Sym);
  def("procedure?", 1, 1, (a) => isProcedure(a[0]));
  def("string-length", 1, 1, (a) => BigInt(str("string-length", a[0]).length));
  def("string-append", 0, -1, (a, ctx) => {
    const parts = a.map((s) => str("string-append", s));
    const total = parts.reduce((n, s) => n + s.length, 0);
    ctx.charge(total >> 4);
    ctx.allocate(16 + total);
    return parts.join("");
  });
  def("substring", 2, 3, (a) => {
    const s = str("substring", a[0]);
    const start = index("substring", a[1]);
    const end = a.length === 3 ? index("substring", a[2]) : s.length;
    if (start > end || end > s.length) {
      throw runtimeError(
        `substring: range ${start}..${end} is out of bounds for length ${s.length}`,
      );
    }
    return s.slice(start, end);
  });
  def(
    "string=?",
    1,
    -1,
    stringCompare("string=?", (x, y) => x === y),
  );
  def(
    "string<?",
    1,
    -1,
    stringCompare("string<?", (x, y) => x < y),
  );
  def(
    "string>?",
    1,
    -1,
    stringCompare("string>?", (x, y) => x > y),
  );
  def("string-upcase", 1, 1, (a) => str("string-upcase", a[0]).toUpperCase());
  def("string-downcase", 1, 1, (a) => str("string-downcase", a[0]).toLowerCase());
  def("string->symbol", 1, 1, (a) => sym(str("string->symbol", a[0])));
  def("symbol->string", 1, 1, (a) => {
    if (!(a[0] instanceof Sym)) throw expected("symbol->string", "a symbol", a[0]);
    return a[0].name;
  });
  def("string->list", 1, 1, (a, ctx) => {
    const chars = Array.from(str("string->list", a[0]));
    ctx.allocate(PAIR_BYTES * chars.length);
    return arrayToList(chars);
  });

  // Output and control.
  def("display", 1, 1, (a, ctx) => {
    ctx.write(printValue(a[0], "display"));
    return UNSPECIFIED;
  });
  def("write", 1, 1, (a, ctx) => {
    ctx.write(printValue(a[0], "write"));
    return UNSPECIFIED;
  });
  def("displayln", 1, 1, (a, ctx) => {
    ctx.write(printValue(a[0], "display") + "\n");
    return UNSPECIFIED;
  });
  def("newline", 0, 0, (_a, ctx) => {
    ctx.write("\n");
    return UNSPECIFIED;
  });
  def("error", 1, -1, (a) => {
    throw runtimeError(errorMessage(a));
  });
  def("void", 0, -1, () => UNSPECIFIED);

  return all;
}

/** The primitives the compiler's desugarings call directly. */
export function corePrimitives(all: Builtin[]): { cons: Builtin; append: Builtin; memv: Builtin } {
  const find = (name: string): Builtin => all.find((b) => b.name === name)!;
  return { cons: find("cons"), append: find("append"), memv: find("memv") };
}
