// printf-family formatting over VM memory: conversions d i u x X o c s f F e E g G p %, with
// flags (- + space 0 #), width and precision (numbers or *), and the hh h l ll z j t L lengths.
// Variadic arguments arrive as 8-byte slots (integers widened to 64 bits, floats as double).
import type { VmMemory } from "./memory.js";

interface Spec {
  left: boolean;
  plus: boolean;
  space: boolean;
  zero: boolean;
  alt: boolean;
  width: number;
  precision: number; // -1: none
  length: string;
  conv: string;
}

function pad(body: string, sign: string, spec: Spec, numeric: boolean): string {
  const len = sign.length + body.length;
  if (len >= spec.width) return sign + body;
  const fill = spec.width - len;
  if (spec.left) return sign + body + " ".repeat(fill);
  if (spec.zero && numeric) return sign + "0".repeat(fill) + body;
  return " ".repeat(fill) + sign + body;
}

/** C's %e exponent: at least two digits. */
function fixExponent(s: string): string {
  return s.replace(/e([+-])(\d)$/, "e$10$2");
}

/** toFixed, except that exact ties round to even as glibc does (toFixed rounds them up). */
function roundHalfEvenFixed(v: number, prec: number): string {
  const s = v.toFixed(prec);
  if (prec + 25 > 100) return s;
  // The exact binary value, far enough to see whether the dropped part is exactly one half.
  const exact = v.toFixed(Math.min(100, prec + 25));
  const dot = exact.indexOf(".");
  const cut = prec === 0 ? dot : dot + 1 + prec;
  const dropped = exact.slice(prec === 0 ? dot + 1 : cut);
  if (!/^50*$/.test(dropped)) return s;
  const kept = exact.slice(0, cut);
  const lastDigit = Number(kept.replace(".", "").slice(-1));
  if (lastDigit % 2 === 1) return s; // rounding up makes it even
  return kept.endsWith(".") ? kept.slice(0, -1) : kept;
}

/** The exact significant decimal digits of a non-negative double and its decimal exponent, when
 * they fit in what toFixed can show; null otherwise. */
function exactDigits(a: number): { digits: string; exp: number } | null {
  if (a === 0 || !Number.isFinite(a)) return null;
  let text: string;
  if (a >= 1e21) text = BigInt(a).toString();
  else if (a >= 1e-80) text = a.toFixed(100);
  else return null;
  const [int = "", frac = ""] = text.split(".");
  const all = (int + frac).replace(/^0+/, "");
  const exp =
    int.replace(/^0+/, "").length > 0
      ? int.replace(/^0+/, "").length - 1
      : -(frac.length - frac.replace(/^0+/, "").length) - 1;
  return { digits: all.replace(/0+$/, ""), exp };
}

/** toExponential, except that exact ties round to even as glibc does. */
function toExponentialEven(a: number, prec: number): string {
  const s = a.toExponential(prec);
  const ex = exactDigits(a);
  if (!ex || ex.digits.length !== prec + 2 || ex.digits[prec + 1] !== "5") return s;
  if (Number(ex.digits[prec]) % 2 === 1) return s;
  const kept = ex.digits.slice(0, prec + 1);
  const mant = prec > 0 ? `${kept[0]}.${kept.slice(1)}` : kept;
  return `${mant}e${ex.exp >= 0 ? "+" : "-"}${Math.abs(ex.exp)}`;
}

/** The exact decimal expansion of a finite double to `prec` places, ties to even (glibc's
 * %f for any precision; toFixed stops at 100). */
function exactFixed(a: number, prec: number): string {
  const dv = new DataView(new ArrayBuffer(8));
  dv.setFloat64(0, a);
  const bits = dv.getBigUint64(0);
  const biased = Number((bits >> 52n) & 0x7ffn);
  let mant = bits & ((1n << 52n) - 1n);
  if (biased !== 0) mant |= 1n << 52n;
  const e2 = (biased === 0 ? 1 : biased) - 1075; // a = mant * 2^e2
  let num = mant * 10n ** BigInt(prec);
  let den = 1n;
  if (e2 >= 0) num <<= BigInt(e2);
  else den <<= BigInt(-e2);
  let q = num / den;
  const r = 2n * (num % den);
  if (r > den || (r === den && (q & 1n) === 1n)) q++;
  const digits = q.toString().padStart(prec + 1, "0");
  const cut = digits.length - prec;
  return prec > 0 ? `${digits.slice(0, cut)}.${digits.slice(cut)}` : digits;
}

function formatFixed(v: number, prec: number): string {
  if (prec > 100) return exactFixed(Math.abs(v), prec);
  if (Math.abs(v) < 1e21) return roundHalfEvenFixed(Math.abs(v), prec);
  const int = BigInt(Math.abs(v)).toString();
  return prec > 0 ? `${int}.${"0".repeat(prec)}` : int;
}

function formatFloat(v: number, spec: Spec): { body: string; sign: string } {
  const upper = spec.conv === spec.conv.toUpperCase();
  const negative = v < 0 || Object.is(v, -0);
  const sign = negative ? "-" : spec.plus ? "+" : spec.space ? " " : "";
  if (!Number.isFinite(v)) {
    const body = Number.isNaN(v) ? "nan" : "inf";
    return { body: upper ? body.toUpperCase() : body, sign: Number.isNaN(v) ? "" : sign };
  }
  const a = Math.abs(v);
  const prec = spec.precision < 0 ? 6 : spec.precision;
  let body: string;
  switch (spec.conv.toLowerCase()) {
    case "f":
      body = formatFixed(a, prec);
      if (spec.alt && prec === 0) body += ".";
      break;
    case "e":
      body = toExponentialEven(a, Math.min(prec, 100));
      if (spec.alt && prec === 0) body = body.replace("e", ".e");
      body = fixExponent(body);
      break;
    default: {
      // %g: pick %e or %f by the exponent, then drop trailing zeros unless '#'.
      const p = prec === 0 ? 1 : prec;
      const exp = a === 0 ? 0 : Number(toExponentialEven(a, Math.min(p - 1, 100)).split("e")[1]);
      if (exp < -4 || exp >= p) {
        body = toExponentialEven(a, Math.min(p - 1, 100));
        if (!spec.alt) body = body.replace(/\.?0+e/, "e");
        body = fixExponent(body);
      } else {
        body = formatFixed(a, Math.max(p - 1 - exp, 0));
        if (!spec.alt && body.includes(".")) body = body.replace(/\.?0+$/, "");
      }
    }
  }
  return { body: upper ? body.toUpperCase() : body, sign };
}

/** Formats `fmt` with arguments read from the slots at `args`; returns the produced bytes. */
export function formatPrintf(mem: VmMemory, fmtPtr: number, args: number): number[] {
  const fmt = mem.readCBytes(fmtPtr);
  const out: number[] = [];
  let slot = 0;
  const dv = (): DataView => mem.dv;
  const nextI64 = (): bigint => dv().getBigInt64(args + 8 * slot++, true);
  const nextF64 = (): number => dv().getFloat64(args + 8 * slot++, true);
  const emit = (s: string): void => {
    for (const b of Buffer.from(s, "latin1")) out.push(b);
  };
  for (let i = 0; i < fmt.length; i++) {
    const c = fmt[i]!;
    if (c !== 37 /* % */) {
      out.push(c);
      continue;
    }
    const spec: Spec = {
      left: false,
      plus: false,
      space: false,
      zero: false,
      alt: false,
      width: 0,
      precision: -1,
      length: "",
      conv: "",
    };
    i++;
    for (; i < fmt.length; i++) {
      const f = String.fromCharCode(fmt[i]!);
      if (f === "-") spec.left = true;
      else if (f === "+") spec.plus = true;
      else if (f === " ") spec.space = true;
      else if (f === "0") spec.zero = true;
      else if (f === "#") spec.alt = true;
      else break;
    }
    if (fmt[i] === 42 /* * */) {
      const w = Number(BigInt.asIntN(32, nextI64()));
      if (w < 0) spec.left = true;
      spec.width = Math.abs(w);
      i++;
    } else while (fmt[i]! >= 48 && fmt[i]! <= 57) spec.width = spec.width * 10 + fmt[i++]! - 48;
    if (fmt[i] === 46 /* . */) {
      i++;
      spec.precision = 0;
      if (fmt[i] === 42) {
        const p = Number(BigInt.asIntN(32, nextI64()));
        spec.precision = p < 0 ? -1 : p;
        i++;
      } else
        while (fmt[i]! >= 48 && fmt[i]! <= 57)
          spec.precision = spec.precision * 10 + fmt[i++]! - 48;
    }
    spec.width = Math.min(spec.width, 1 << 16);
    spec.precision = Math.min(spec.precision, 1 << 10);
    while (i < fmt.length && "hlLqjzt".includes(String.fromCharCode(fmt[i]!)))
      spec.length += String.fromCharCode(fmt[i++]!);
    if (i >= fmt.length) {
      emit("%" + spec.length);
      break;
    }
    spec.conv = String.fromCharCode(fmt[i]!);
    const long = spec.length.includes("l") || "qjzt".includes(spec.length[0] ?? "-");
    switch (spec.conv) {
      case "%":
        out.push(37);
        break;
      case "d":
      case "i":
      case "u":
      case "x":
      case "X":
      case "o": {
        const raw = nextI64();
        const signed = spec.conv === "d" || spec.conv === "i";
        let v: bigint;
        if (spec.length === "hh") v = signed ? BigInt.asIntN(8, raw) : BigInt.asUintN(8, raw);
        else if (spec.length === "h") v = signed ? BigInt.asIntN(16, raw) : BigInt.asUintN(16, raw);
        else if (long) v = signed ? raw : BigInt.asUintN(64, raw);
        else v = signed ? BigInt.asIntN(32, raw) : BigInt.asUintN(32, raw);
        const neg = v < 0n;
        const mag = neg ? -v : v;
        const radix =
          spec.conv === "o"
            ? 8
            : spec.conv === "d" || spec.conv === "i" || spec.conv === "u"
              ? 10
              : 16;
        let body = mag.toString(radix);
        if (spec.conv === "X") body = body.toUpperCase();
        if (spec.precision >= 0) {
          if (spec.precision === 0 && mag === 0n) body = "";
          body = body.padStart(spec.precision, "0");
        }
        let sign = neg ? "-" : signed && spec.plus ? "+" : signed && spec.space ? " " : "";
        if (spec.alt && mag !== 0n) {
          if (spec.conv === "x") sign += "0x";
          else if (spec.conv === "X") sign += "0X";
          else if (spec.conv === "o" && !body.startsWith("0")) body = "0" + body;
        }
        if (spec.precision >= 0) spec.zero = false;
        emit(pad(body, sign, spec, true));
        break;
      }
      case "c": {
        const ch = Number(BigInt.asUintN(8, nextI64()));
        const s: Spec = { ...spec };
        const padded = pad("\u0000", "", s, false);
        for (const ch2 of padded) out.push(ch2 === "\u0000" ? ch : 32);
        break;
      }
      case "s": {
        const p = Number(BigInt.asUintN(32, nextI64()));
        let bytes: Uint8Array = p === 0 ? Buffer.from("(null)") : mem.readCBytes(p);
        if (spec.precision >= 0) bytes = bytes.subarray(0, spec.precision);
        const fill = Math.max(0, spec.width - bytes.length);
        if (!spec.left) for (let k = 0; k < fill; k++) out.push(32);
        for (const b of bytes) out.push(b);
        if (spec.left) for (let k = 0; k < fill; k++) out.push(32);
        break;
      }
      case "p": {
        const p = Number(BigInt.asUintN(32, nextI64()));
        emit(pad(p === 0 ? "(nil)" : "0x" + p.toString(16), "", spec, false));
        break;
      }
      case "f":
      case "F":
      case "e":
      case "E":
      case "g":
      case "G": {
        const { body, sign } = formatFloat(nextF64(), spec);
        emit(pad(body, sign, spec, Number.isFinite(Number(body)) || /\d/.test(body)));
        break;
      }
      case "n":
        slot++;
        break;
      default:
        emit("%" + spec.conv);
    }
  }
  return out;
}
