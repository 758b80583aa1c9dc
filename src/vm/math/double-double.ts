// Double-double arithmetic: a value is an unevaluated sum hi + lo of two doubles (about 106
// bits), enough to round the result of exp, log, pow, sin… correctly to double. The error-free
// transformations are Dekker's and Knuth's (no FMA in JavaScript). Every operation returns the
// high part and leaves the low part in `lo` (read it at once): no pair is ever allocated, which
// keeps a libm call in the hundreds of nanoseconds. The constants π/2 and ln 2 are computed
// from series in BigInt once, so no digit string can be mistyped.

/** The low part of the last result. */
export let lo = 0;

/** a + b exactly: the sum, its error in `lo`. */
export function twoSum(a: number, b: number): number {
  const s = a + b;
  const bb = s - a;
  lo = a - (s - bb) + (b - bb);
  return s;
}

/** a + b exactly when |a| >= |b|. */
function quickTwoSum(a: number, b: number): number {
  const s = a + b;
  lo = b - (s - a);
  return s;
}

const SPLITTER = 134217729; // 2^27 + 1

/** a · b exactly (for |a|, |b| below 2^995): the product, its error in `lo`. */
export function twoProd(a: number, b: number): number {
  const p = a * b;
  let t = SPLITTER * a;
  const ah = t - (t - a);
  const al = a - ah;
  t = SPLITTER * b;
  const bh = t - (t - b);
  const bl = b - bh;
  lo = ah * bh - p + ah * bl + al * bh + al * bl;
  return p;
}

export function add(ah: number, al: number, bh: number, bl: number): number {
  const s = twoSum(ah, bh);
  const e0 = lo;
  const u = twoSum(al, bl);
  const f = lo;
  const s1 = quickTwoSum(s, e0 + u);
  return quickTwoSum(s1, lo + f);
}

export function mul(ah: number, al: number, bh: number, bl: number): number {
  const p = twoProd(ah, bh);
  return quickTwoSum(p, lo + (ah * bl + al * bh));
}

export function mulNumber(ah: number, al: number, b: number): number {
  const p = twoProd(ah, b);
  return quickTwoSum(p, lo + al * b);
}

export function div(ah: number, al: number, bh: number, bl: number): number {
  const q1 = ah / bh;
  let ph = mulNumber(bh, bl, q1);
  let pl = lo;
  let rh = add(ah, al, -ph, -pl);
  const rl = lo;
  const q2 = rh / bh;
  ph = mulNumber(bh, bl, q2);
  pl = lo;
  rh = add(rh, rl, -ph, -pl);
  const q3 = rh / bh;
  const s = quickTwoSum(q1, q2);
  return add(s, lo, q3, 0);
}

export function sqrt(ah: number, al: number): number {
  if (ah <= 0) {
    lo = 0;
    return Math.sqrt(ah);
  }
  const s = Math.sqrt(ah);
  const p = twoProd(s, s);
  const r = add(ah, al, -p, -lo);
  return quickTwoSum(s, r / (2 * s));
}

/** Σ c[i]·x^i by Horner's rule in double-double; c as interleaved hi, lo pairs. */
export function horner(xh: number, xl: number, c: Float64Array): number {
  let n = c.length - 2;
  let h = c[n]!;
  let l = c[n + 1]!;
  for (n -= 2; n >= 0; n -= 2) {
    h = mul(h, l, xh, xl);
    h = add(h, lo, c[n]!, c[n + 1]!);
    l = lo;
  }
  lo = l;
  return h;
}

/** 2^k for any integer k a double can reach (including subnormal powers). */
export function pow2(k: number): number {
  if (k > 1023) return Infinity;
  if (k >= -1022) return 2 ** k;
  return 2 ** (k + 1000) * 2 ** -1000;
}

/**
 * (hi + lo) · 2^k rounded once to the nearest double: exact scaling while the result is
 * normal; in the subnormal range the bits scaled away are looked at again, so that rounding
 * hi first and the scaled value second cannot round twice.
 */
export function roundScaled(hi: number, low: number, k: number): number {
  if (k > 1000) return roundScaled(hi * 2 ** 1000, low * 2 ** 1000, k - 1000);
  const r = hi * pow2(k);
  if (Math.abs(r) >= 2 ** -1022 || !Number.isFinite(r)) return r;
  return roundTiny(hi, low, k);
}

/** The subnormal case of roundScaled: integer arithmetic in units of 2^-1074·2^-64. */
function roundTiny(hi: number, low: number, k: number): number {
  const units = exactScaled(hi, k + 1074 + 64) + exactScaled(low, k + 1074 + 64);
  const ONE = 1n << 64n;
  let n = units >> 64n; // floor
  const frac = units - (n << 64n);
  const half = ONE >> 1n;
  if (frac > half || (frac === half && (n & 1n) === 1n)) n += 1n;
  return Number(n) * 2 ** -1074;
}

/** x · 2^p as a BigInt: exact when that is an integer, else rounded toward −∞. */
function exactScaled(x: number, p: number): bigint {
  if (x === 0) return 0n;
  // x = m · 2^e with m an integer of at most 53 bits.
  let e = Math.floor(Math.log2(Math.abs(x))) - 52;
  while (!Number.isInteger(x / pow2(e))) e--;
  const m = BigInt(x / pow2(e));
  const shift = e + p;
  return shift >= 0 ? m << BigInt(shift) : m >> BigInt(-shift);
}

/** A constant to about 160 bits as three doubles, from a BigInt fixed-point value. */
function split3(fixed: bigint, bits: number): readonly [number, number, number] {
  const parts: number[] = [];
  let rest = fixed;
  for (let i = 0; i < 3; i++) {
    const v = Number(rest) / 2 ** bits; // Number(bigint) rounds to nearest
    parts.push(v);
    rest -= exactScaled(v, bits);
  }
  return [parts[0]!, parts[1]!, parts[2]!];
}

const BITS = 256;
const SCALE = 1n << BigInt(BITS);

/** atan(1/n) · 2^BITS by its Taylor series. */
function arctanInverse(n: bigint): bigint {
  let sum = 0n;
  let term = SCALE / n;
  const n2 = n * n;
  for (let k = 1n; term !== 0n; k += 2n) {
    sum += (k % 4n === 1n ? term : -term) / k;
    term /= n2;
  }
  return sum;
}

/** ln 2 · 2^BITS = Σ 1/(k·2^k). */
function ln2Fixed(): bigint {
  let sum = 0n;
  for (let k = 1n; ; k++) {
    const term = SCALE / (k << k);
    if (term === 0n) return sum;
    sum += term;
  }
}

/** π · 2^BITS by Machin's formula. */
const piFixed = (): bigint => 16n * arctanInverse(5n) - 4n * arctanInverse(239n);

let constants: { PIO2: readonly number[]; LN2: readonly number[] } | null = null;

/** π/2 and ln 2 as three-double sums (about 160 bits). */
export function mathConstants(): { PIO2: readonly number[]; LN2: readonly number[] } {
  constants ??= { PIO2: split3(piFixed() / 2n, BITS), LN2: split3(ln2Fixed(), BITS) };
  return constants;
}
