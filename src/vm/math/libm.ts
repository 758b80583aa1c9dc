// The C math library as glibc computes it. glibc's exp, exp2, log, log2, pow, sin, cos, tan,
// asin, acos, atan, atan2 and hypot round correctly but for rare cases (its error bounds are
// 0.50x ulp); V8's fdlibm ports do not (Math.pow(10, -5) is 9.999999999999999e-6). These
// evaluate in double-double (about 106 bits, tables of 2^(j/256), ln(1 + j/128) and
// sin/cos(j/64) keep the series short) and round once. log10, cosh and sinh follow fdlibm's
// formulas, which glibc shares, on top of the log and exp here; expm1, log1p and tanh are
// fdlibm's in both, so V8's serve. test/vm/libm.test.ts checks agreement with gcc.
import {
  add,
  div,
  horner,
  lo,
  mathConstants,
  mul,
  roundScaled,
  sqrt as ddSqrt,
  twoProd,
  twoSum,
} from "./double-double.js";

/** The low part of a kernel's double-double result (kernels return the high part). */
let klo = 0;
/** The power of two expK's result carries. */
let kexp = 0;

/** Pairs (hi, lo) of double-double constants: c[2i], c[2i+1]. */
type Pairs = Float64Array;

interface Tables {
  /** 2^(j/256), j = 0…255. */
  exp2j: Pairs;
  /** ln(1 + j/128), j = −38…53 (index j + 38). */
  logc: Pairs;
  /** sin(j/64) and cos(j/64), j = 0…52. */
  sinj: Pairs;
  cosj: Pairs;
  /** Taylor coefficients: 1/n! (n = 1…5) for exp; ±1/n! for sin and cos; 1/(2k+1) for atanh. */
  expC: Pairs;
  sinC: Pairs;
  cosC: Pairs;
  atanhC: Pairs;
  ln2: readonly number[];
  pio2: readonly number[];
}

let tables: Tables | null = null;

function pairs(values: Array<[number, number]>): Pairs {
  const out = new Float64Array(values.length * 2);
  values.forEach(([h, l], i) => {
    out[2 * i] = h;
    out[2 * i + 1] = l;
  });
  return out;
}

/** 1/n or −1/n in double-double. */
function reciprocal(n: number): [number, number] {
  const h = div(1, 0, n, 0);
  return [h, lo];
}

/** Built once, with long series that need no table. */
function buildTables(): Tables {
  const { LN2: ln2, PIO2: pio2 } = mathConstants();
  const fact: Array<[number, number]> = [[1, 0]];
  for (let n = 1; n <= 40; n++) {
    const h = div(fact[n - 1]![0], fact[n - 1]![1], n, 0);
    fact.push([h, lo]);
  }
  const negate = ([h, l]: [number, number]): [number, number] => [-h, -l];
  // e^r for |r| < 0.7: Taylor to r^30/30!.
  const slowExp = (rh: number, rl: number): [number, number] => {
    const h = horner(rh, rl, pairs(fact.slice(0, 31)));
    return [h, lo];
  };
  const exp2j: Array<[number, number]> = [];
  for (let j = 0; j < 256; j++) {
    const h = mul(ln2[0]!, ln2[1]!, j / 256, 0);
    exp2j.push(slowExp(h, lo));
  }
  // ln c = 2·atanh((c − 1)/(c + 1)), |u| ≤ 0.18: the series to u^81.
  const atanhLong = pairs(Array.from({ length: 41 }, (_, k) => reciprocal(2 * k + 1)));
  const logc: Array<[number, number]> = [];
  for (let j = -38; j <= 53; j++) {
    const c = 1 + j / 128;
    const dh = twoSum(c, 1);
    const uh = div(c - 1, 0, dh, lo);
    const ul = lo;
    const u2 = mul(uh, ul, uh, ul);
    const s = horner(u2, lo, atanhLong);
    const h = mul(s, lo, 2 * uh, 2 * ul);
    logc.push([h, lo]);
  }
  const sinLong = pairs(
    Array.from({ length: 20 }, (_, k) =>
      (k % 2 ? negate : (x: [number, number]) => x)(fact[2 * k + 1]!),
    ),
  );
  const cosLong = pairs(
    Array.from({ length: 20 }, (_, k) =>
      (k % 2 ? negate : (x: [number, number]) => x)(fact[2 * k]!),
    ),
  );
  const sinj: Array<[number, number]> = [];
  const cosj: Array<[number, number]> = [];
  for (let j = 0; j <= 52; j++) {
    const a = j / 64;
    const a2 = twoProd(a, a);
    const a2l = lo;
    const s = horner(a2, a2l, sinLong);
    const sh = mul(s, lo, a, 0);
    sinj.push([sh, lo]);
    const ch = horner(a2, a2l, cosLong);
    cosj.push([ch, lo]);
  }
  return {
    exp2j: pairs(exp2j),
    logc: pairs(logc),
    sinj: pairs(sinj),
    cosj: pairs(cosj),
    expC: pairs(fact.slice(1, 6)),
    sinC: pairs([fact[1]!, negate(fact[3]!), fact[5]!, negate(fact[7]!)]),
    cosC: pairs([fact[0]!, negate(fact[2]!), fact[4]!, negate(fact[6]!)]),
    atanhC: pairs([reciprocal(1), reciprocal(3), reciprocal(5)]),
    ln2,
    pio2,
  };
}

const T = (): Tables => (tables ??= buildTables());

/** e^(ah + al) for |a| < 746 as (hi + klo) · 2^kexp. */
function expK(ah: number, al: number): number {
  const { exp2j, expC, ln2 } = T();
  const k = Math.round(ah * (256 / Math.LN2));
  // r = a − k·ln2/256, with ln 2 to 160 bits (the products are exact)
  let h = twoProd(k, ln2[0]! / 256);
  let rh = add(ah, al, -h, -lo);
  let rl = lo;
  h = twoProd(k, ln2[1]! / 256);
  rh = add(rh, rl, -h, -lo);
  rl = lo;
  rh = add(rh, rl, (-k * ln2[2]!) / 256, 0);
  rl = lo;
  // e^r − 1 = r·Σ r^(n−1)/n!, |r| < 0.00136: terms from r^5/6! on in double suffice.
  h = 1 / 720 + rh * (1 / 5040 + rh * (1 / 40320 + rh * (1 / 362880 + rh / 3628800)));
  let l = 0;
  for (let i = 8; i >= 0; i -= 2) {
    h = mul(h, l, rh, rl);
    h = add(h, lo, expC[i]!, expC[i + 1]!);
    l = lo;
  }
  h = mul(h, l, rh, rl);
  l = lo;
  const j = k & 255;
  const th = exp2j[2 * j]!;
  const tl = exp2j[2 * j + 1]!;
  h = mul(th, tl, h, l);
  h = add(th, tl, h, lo);
  klo = lo;
  kexp = (k - j) / 256;
  return h;
}

/** e^a rounded once; a double-double argument lets pow pass y·ln x unrounded. */
function expOf(ah: number, al: number): number {
  if (ah > 710) return Infinity;
  if (ah < -746) return 0;
  const h = expK(ah, al);
  return roundScaled(h, klo, kexp);
}

const F64 = new Float64Array(1);
const U32 = new Uint32Array(F64.buffer);
const HI = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 1 : 0; // little-endian: word 1

/** The significand of the last binaryExponent call, in [1, 2). */
let significand = 1;

/** e with x = significand·2^e, for a positive finite x (subnormals included). */
function binaryExponent(x: number): number {
  let e = 0;
  if (x < 2 ** -1022) {
    x *= 2 ** 54;
    e = -54;
  }
  F64[0] = x;
  const hw = U32[HI]!;
  U32[HI] = (hw & 0xfffff) | 0x3ff00000;
  significand = F64[0]!;
  return e + (hw >>> 20) - 1023;
}

/** ln x for a positive finite x, as hi + klo: x = m·2^e with m in [√½, √2), m near
 * c = 1 + j/128, and ln m = ln c + 2·atanh((m − c)/(m + c)). */
function logK(x: number): number {
  const { logc, atanhC, ln2 } = T();
  let e = binaryExponent(x);
  let m = significand;
  if (m > Math.SQRT2) {
    m /= 2;
    e += 1;
  }
  const j = Math.round((m - 1) * 128);
  const c = 1 + j / 128;
  const dh = twoSum(m, c);
  const uh = div(m - c, 0, dh, lo); // m − c is exact
  const ul = lo;
  const u2h = mul(uh, ul, uh, ul);
  const u2l = lo;
  // Σ u^(2k)/(2k+1): |u| < 2^-8, so the terms from u^6 on are small enough for double.
  let h = add(atanhC[4]!, atanhC[5]!, u2h * (1 / 7 + u2h * (1 / 9 + u2h / 11)), 0);
  let l = lo;
  for (let i = 2; i >= 0; i -= 2) {
    h = mul(h, l, u2h, u2l);
    h = add(h, lo, atanhC[i]!, atanhC[i + 1]!);
    l = lo;
  }
  h = mul(h, l, 2 * uh, 2 * ul);
  l = lo;
  h = add(h, l, logc[2 * (j + 38)]!, logc[2 * (j + 38) + 1]!);
  l = lo;
  if (e !== 0) {
    const eh = twoProd(e, ln2[0]!);
    h = add(h, l, eh, lo + e * ln2[1]! + e * ln2[2]!);
    l = lo;
  }
  klo = l;
  return h;
}

/** Where C's rules for log-like functions settle the answer without evaluating. */
function logSpecial(x: number): number | null {
  if (Number.isNaN(x) || x < 0) return NaN;
  if (x === 0) return -Infinity;
  if (x === Infinity) return Infinity;
  return null;
}

export function exp(x: number): number {
  if (Number.isNaN(x)) return x;
  return expOf(x, 0);
}

export function exp2(x: number): number {
  if (Number.isNaN(x)) return x;
  if (x > 1024) return Infinity;
  if (x < -1100) return 0;
  const k = Math.round(x);
  const { ln2 } = T();
  const h = mul(ln2[0]!, ln2[1]!, x - k, 0); // x − k is exact
  const eh = expK(h, lo);
  return roundScaled(eh, klo, kexp + k);
}

export function log(x: number): number {
  return logSpecial(x) ?? logK(x);
}

export function log2(x: number): number {
  const special = logSpecial(x);
  if (special !== null) return special;
  const h = logK(x);
  const { ln2 } = T();
  return div(h, klo, ln2[0]!, ln2[1]!);
}

/** A double from its IEEE-754 bits. */
function fromBits(bits: bigint): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, bits);
  return view.getFloat64(0);
}

// glibc's log10 is fdlibm's formula around its log, not a correctly rounded one: the same
// constants and steps give its results.
const IVLN10 = fromBits(0x3fdbcb7b1526e50en);
const LOG10_2HI = fromBits(0x3fd34413509f6000n);
const LOG10_2LO = fromBits(0x3d59fef311f12b36n);

export function log10(x: number): number {
  const special = logSpecial(x);
  if (special !== null) return special;
  const k = binaryExponent(x);
  // fdlibm keeps m in [1, 2) for k ≥ 0 and takes m/2, k + 1 below.
  const i = k < 0 ? 1 : 0;
  const m = i ? significand / 2 : significand;
  const y = k + i;
  const z = y * LOG10_2LO + IVLN10 * log(m);
  return z + y * LOG10_2HI;
}

export function pow(x: number, y: number): number {
  // C's rules (C17 F.10.4.4) where JavaScript's Math.pow answers NaN.
  if (y === 0 || x === 1) return 1;
  if (Number.isNaN(x) || Number.isNaN(y)) return NaN;
  if (x === -1 && !Number.isFinite(y)) return 1;
  if (!Number.isFinite(x) || !Number.isFinite(y) || x === 0) return Math.pow(x, y);
  if (x < 0) {
    if (!Number.isInteger(y)) return NaN;
    const odd = Math.abs(y) < 2 ** 53 && y % 2 !== 0;
    return odd ? -powPositive(-x, y) : powPositive(-x, y);
  }
  return powPositive(x, y);
}

function powPositive(x: number, y: number): number {
  if (y === 1) return x;
  if (y === 2) return x * x; // rounded once, even where x² lies on a midpoint
  if (y === -1) return 1 / x;
  if (y === 0.5) return Math.sqrt(x);
  const lh = logK(x);
  const ll = klo;
  const h = twoProd(lh, y);
  return expOf(h, lo + ll * y);
}

/** Beyond this, V8's fdlibm (with its exact Payne–Hanek reduction, within 1 ulp) answers. */
const REDUCTION_LIMIT = 2 ** 20;

let sinH = 0;
let sinL = 0;
let cosH = 0;
let cosL = 0;

/** sin and cos of a finite |x| < REDUCTION_LIMIT into sinH/sinL and cosH/cosL. */
function sinCos(x: number): void {
  const { pio2, sinj, cosj, sinC, cosC } = T();
  let rh = x;
  let rl = 0;
  let q = 0;
  if (Math.abs(x) > Math.PI / 4) {
    const k = Math.round(x / (Math.PI / 2));
    let h = twoProd(k, pio2[0]!);
    rh = add(x, 0, -h, -lo);
    rl = lo;
    h = twoProd(k, pio2[1]!);
    rh = add(rh, rl, -h, -lo);
    rl = lo;
    h = twoProd(k, pio2[2]!);
    rh = add(rh, rl, -h, -lo);
    rl = lo;
    q = ((k % 4) + 4) % 4;
  }
  const negative = rh < 0;
  if (negative) {
    rh = -rh;
    rl = -rl;
  }
  // r = j/64 + d, |d| ≤ 1/128; sin d and cos d by Taylor, the terms from d^8 on in double.
  const j = Math.round(rh * 64);
  const dh = add(rh, rl, -j / 64, 0);
  const dl = lo;
  const d2h = mul(dh, dl, dh, dl);
  const d2l = lo;
  let h = add(sinC[6]!, sinC[7]!, d2h * (1 / 362880 - d2h * (1 / 39916800 - d2h / 6227020800)), 0);
  let l = lo;
  for (let i = 4; i >= 0; i -= 2) {
    h = mul(h, l, d2h, d2l);
    h = add(h, lo, sinC[i]!, sinC[i + 1]!);
    l = lo;
  }
  const sdh = mul(h, l, dh, dl);
  const sdl = lo;
  h = add(cosC[6]!, cosC[7]!, d2h * (1 / 40320 - d2h * (1 / 3628800 - d2h / 479001600)), 0);
  l = lo;
  for (let i = 4; i >= 0; i -= 2) {
    h = mul(h, l, d2h, d2l);
    h = add(h, lo, cosC[i]!, cosC[i + 1]!);
    l = lo;
  }
  const cdh = h;
  const cdl = l;
  // sin(a + d) = sin a·cos d + cos a·sin d; cos(a + d) = cos a·cos d − sin a·sin d
  const sah = sinj[2 * j]!;
  const sal = sinj[2 * j + 1]!;
  const cah = cosj[2 * j]!;
  const cal = cosj[2 * j + 1]!;
  h = mul(sah, sal, cdh, cdl);
  l = lo;
  let g = mul(cah, cal, sdh, sdl);
  let sh = add(h, l, g, lo);
  let sl = lo;
  h = mul(cah, cal, cdh, cdl);
  l = lo;
  g = mul(sah, sal, sdh, sdl);
  const ch = add(h, l, -g, -lo);
  const cl = lo;
  if (negative) {
    sh = -sh;
    sl = -sl;
  }
  switch (q) {
    case 0:
      [sinH, sinL, cosH, cosL] = [sh, sl, ch, cl];
      break;
    case 1:
      [sinH, sinL, cosH, cosL] = [ch, cl, -sh, -sl];
      break;
    case 2:
      [sinH, sinL, cosH, cosL] = [-sh, -sl, -ch, -cl];
      break;
    default:
      [sinH, sinL, cosH, cosL] = [-ch, -cl, sh, sl];
  }
}

export function sin(x: number): number {
  if (x === 0 || !Number.isFinite(x) || Math.abs(x) >= REDUCTION_LIMIT) return Math.sin(x);
  sinCos(x);
  return sinH + sinL;
}

export function cos(x: number): number {
  if (!Number.isFinite(x) || Math.abs(x) >= REDUCTION_LIMIT) return Math.cos(x);
  sinCos(x);
  return cosH + cosL;
}

export function tan(x: number): number {
  if (x === 0 || !Number.isFinite(x) || Math.abs(x) >= REDUCTION_LIMIT) return Math.tan(x);
  sinCos(x);
  return div(sinH, sinL, cosH, cosL);
}

/** θ0 (within an ulp or two) refined by one Newton step on x·sin θ − y·cos θ = 0. */
function refineAngle(theta0: number, yh: number, yl: number, xh: number, xl: number): number {
  sinCos(theta0);
  let h = mul(xh, xl, sinH, sinL);
  let l = lo;
  let g = mul(yh, yl, cosH, cosL);
  const fh = add(h, l, -g, -lo);
  const fl = lo;
  h = mul(xh, xl, cosH, cosL);
  l = lo;
  g = mul(yh, yl, sinH, sinL);
  const dfh = add(h, l, g, lo);
  const step = div(fh, fl, dfh, lo);
  return add(theta0, 0, -step, -lo);
}

/** asin of w = wh + wl in [0, 0.71], as hi + klo: Newton on sin θ = w. */
function asinK(wh: number, wl: number): number {
  const theta0 = Math.asin(wh);
  if (theta0 === 0) {
    klo = wl;
    return wh;
  }
  sinCos(theta0);
  const fh = add(sinH, sinL, -wh, -wl);
  const step = div(fh, lo, cosH, cosL);
  const h = add(theta0, 0, -step, -lo);
  klo = lo;
  return h;
}

/** asin(√((1 − |x|)/2)) for |x| ≥ 1/2, as hi + klo (1 − |x| and the halving are exact). */
function asinHalfComplement(x: number): number {
  const h = ddSqrt((1 - Math.abs(x)) / 2, 0);
  return asinK(h, lo);
}

export function asin(x: number): number {
  if (Number.isNaN(x) || Math.abs(x) > 1) return NaN;
  if (Math.abs(x) < 2 ** -26) return x;
  if (Math.abs(x) <= 0.5) return asinK(x, 0) + klo;
  const { pio2 } = T();
  const a = asinHalfComplement(x);
  const r = add(pio2[0]!, pio2[1]!, -2 * a, -2 * klo);
  return x < 0 ? -r : r;
}

export function acos(x: number): number {
  if (Number.isNaN(x) || Math.abs(x) > 1) return NaN;
  const { pio2 } = T();
  if (Math.abs(x) <= 0.5) {
    const a = asinK(x, 0);
    return add(pio2[0]!, pio2[1]!, -a, -klo);
  }
  const a = asinHalfComplement(x);
  if (x > 0) return 2 * (a + klo);
  return add(2 * pio2[0]!, 2 * pio2[1]!, -2 * a, -2 * klo);
}

export function atan(x: number): number {
  if (Number.isNaN(x) || Math.abs(x) < 2 ** -27) return x;
  if (!Number.isFinite(x) || Math.abs(x) > 2 ** 60) return Math.atan(x);
  return refineAngle(Math.atan(x), x, 0, 1, 0);
}

export function atan2(y: number, x: number): number {
  const theta0 = Math.atan2(y, x);
  // Zeros, infinities and NaN follow fixed rules (Math.atan2 has C's); so does a result so tiny
  // that scaling the operands below would lose bits.
  if (y === 0 || x === 0 || !Number.isFinite(x) || !Number.isFinite(y)) return theta0;
  if (Math.abs(theta0) < 2 ** -900) return theta0;
  const e = Math.floor(Math.log2(Math.max(Math.abs(x), Math.abs(y))));
  const scale = 2 ** -Math.max(-1000, Math.min(1000, e));
  return refineAngle(theta0, y * scale, 0, x * scale, 0);
}

export function hypot(x: number, y: number): number {
  if (x === Infinity || x === -Infinity || y === Infinity || y === -Infinity) return Infinity;
  if (Number.isNaN(x) || Number.isNaN(y)) return NaN;
  let a = Math.abs(x);
  let b = Math.abs(y);
  if (a < b) [a, b] = [b, a];
  if (b === 0 || b < a * 2 ** -60) return a;
  const e = Math.max(-1000, Math.min(1000, Math.floor(Math.log2(a))));
  const as = a * 2 ** -e;
  const bs = b * 2 ** -e;
  const p = twoProd(as, as);
  const pl = lo;
  const q = twoProd(bs, bs);
  const sh = add(p, pl, q, lo);
  const root = ddSqrt(sh, lo);
  return roundScaled(root, lo, e);
}

export function cbrt(x: number): number {
  if (x === 0 || !Number.isFinite(x)) return x;
  // One Newton step on r³ = x in double-double from V8's estimate (within an ulp).
  const r0 = Math.cbrt(x);
  const sq = twoProd(r0, r0);
  const sql = lo;
  const cube = mul(sq, sql, r0, 0);
  const fh = add(cube, lo, -x, 0);
  const fl = lo;
  const step = div(fh, fl, 3 * sq, 3 * sql);
  return add(r0, 0, -step, -lo);
}

// fdlibm's hyperbolic functions (glibc's too), with the exp above.
const HALF_LN2 = 0.34657359027997264;
const EXP_OVERFLOW = 709.782712893384;
const COSH_OVERFLOW = 710.4758600739439;

export function cosh(x: number): number {
  if (Number.isNaN(x)) return x;
  const ax = Math.abs(x);
  if (ax < HALF_LN2) {
    const t = Math.expm1(ax);
    const w = 1 + t;
    if (ax < 2 ** -55) return w;
    return 1 + (t * t) / (w + w);
  }
  if (ax < 22) {
    const t = exp(ax);
    return 0.5 * t + 0.5 / t;
  }
  if (ax < EXP_OVERFLOW) return 0.5 * exp(ax);
  if (ax <= COSH_OVERFLOW) {
    const w = exp(0.5 * ax);
    return 0.5 * w * w;
  }
  return Infinity;
}

export function sinh(x: number): number {
  if (!Number.isFinite(x)) return x;
  const h = x < 0 ? -0.5 : 0.5;
  const ax = Math.abs(x);
  if (ax < 22) {
    if (ax < 2 ** -28) return x;
    const t = Math.expm1(ax);
    if (ax < 1) return h * (2 * t - (t * t) / (t + 1));
    return h * (t + t / (t + 1));
  }
  if (ax < EXP_OVERFLOW) return h * exp(ax);
  if (ax <= COSH_OVERFLOW) {
    const w = exp(0.5 * ax);
    return h * w * w;
  }
  return x * Infinity;
}
