// Random C integer expressions with exactly known values: a generator that only builds
// expressions free of undefined behaviour, and an evaluator that applies C's conversion rules.
import { seededRandom } from "./robustness-cases.js";

export type IntType = "int" | "unsigned int" | "long long" | "unsigned long long";

interface Typed {
  text: string;
  type: IntType;
  value: bigint;
}

const BITS: Record<IntType, bigint> = {
  int: 32n,
  "unsigned int": 32n,
  "long long": 64n,
  "unsigned long long": 64n,
};

const isSigned = (t: IntType) => t === "int" || t === "long long";

/** C's conversion of an integer value to type t (wrapping, two's complement). */
export function convert(value: bigint, t: IntType): bigint {
  return isSigned(t)
    ? BigInt.asIntN(Number(BITS[t]), value)
    : BigInt.asUintN(Number(BITS[t]), value);
}

/** The usual arithmetic conversions for two operands (int is the rank floor here). */
function common(a: IntType, b: IntType): IntType {
  if (a === b) return a;
  const wide = (t: IntType) => BITS[t] === 64n;
  if (wide(a) || wide(b)) {
    if (a === "unsigned long long" || b === "unsigned long long") return "unsigned long long";
    return "long long";
  }
  return "unsigned int";
}

function literal(value: bigint, t: IntType): string {
  const suffix = { int: "", "unsigned int": "u", "long long": "LL", "unsigned long long": "ULL" }[
    t
  ];
  // The most negative value has no literal of its own type: spell it as (-MAX - 1).
  if (value === -(1n << (BITS[t] - 1n))) return `(-${-value - 1n}${suffix} - 1)`;
  if (value < 0n) return `(-${-value}${suffix})`;
  return `${value}${suffix}`;
}

export interface Variable {
  name: string;
  type: IntType;
  value: bigint;
}

export function makeVariables(random: () => number): Variable[] {
  const pickValue = (t: IntType): bigint => {
    const bits = Number(BITS[t]);
    const choice = random();
    if (choice < 0.3) return convert(BigInt(Math.floor(random() * 2000) - 1000), t);
    if (choice < 0.5)
      return convert((1n << BigInt(bits - 1)) - BigInt(Math.floor(random() * 3)), t);
    let v = 0n;
    for (let i = 0; i < bits; i += 16) v = (v << 16n) | BigInt(Math.floor(random() * 65536));
    return convert(v, t);
  };
  const types: IntType[] = ["int", "unsigned int", "long long", "unsigned long long"];
  return types.flatMap((type, i) => [
    { name: `v${i}a`, type, value: pickValue(type) },
    { name: `v${i}b`, type, value: pickValue(type) },
  ]);
}

/** Builds a random expression whose every arithmetic step happens in an unsigned type (so it
 * wraps instead of overflowing); signed values only flow through casts, comparisons and ?: */
export function makeExpression(random: () => number, vars: Variable[], depth: number): Typed {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
  if (depth <= 0 || random() < 0.15) {
    if (random() < 0.6) {
      const v = pick(vars);
      return { text: v.name, type: v.type, value: v.value };
    }
    const t = pick<IntType>(["int", "unsigned int", "long long", "unsigned long long"]);
    const raw =
      random() < 0.5
        ? BigInt(Math.floor(random() * 200) - 100)
        : BigInt(Math.floor(random() * 4294967296));
    const value = isSigned(t)
      ? convert(raw, t === "int" ? "int" : "long long")
      : convert(raw < 0n ? -raw : raw, t);
    const safe = t === "int" && (value > 2147483647n || value < -2147483647n) ? 7n : value;
    return { text: literal(safe, t), type: t, value: safe };
  }
  const a = makeExpression(random, vars, depth - 1);
  const form = random();
  if (form < 0.12) {
    const t = pick<IntType>(["int", "unsigned int", "long long", "unsigned long long"]);
    return { text: `((${t})${a.text})`, type: t, value: convert(a.value, t) };
  }
  if (form < 0.2) {
    const unsignedType: IntType = BITS[a.type] === 64n ? "unsigned long long" : "unsigned int";
    const u = convert(a.value, unsignedType);
    const op = pick(["~", "-"]);
    const value = convert(op === "~" ? ~u : -u, unsignedType);
    return { text: `(${op}(${unsignedType})${a.text})`, type: unsignedType, value };
  }
  if (form < 0.25) return { text: `(!${a.text})`, type: "int", value: a.value === 0n ? 1n : 0n };
  const b = makeExpression(random, vars, depth - 1);
  if (form < 0.4) {
    const op = pick(["<", "<=", ">", ">=", "==", "!="]);
    const t = common(a.type, b.type);
    const x = convert(a.value, t);
    const y = convert(b.value, t);
    const result = {
      "<": x < y,
      "<=": x <= y,
      ">": x > y,
      ">=": x >= y,
      "==": x === y,
      "!=": x !== y,
    }[op]!;
    return { text: `(${a.text} ${op} ${b.text})`, type: "int", value: result ? 1n : 0n };
  }
  if (form < 0.48) {
    const c = makeExpression(random, vars, depth - 1);
    const t = common(b.type, c.type);
    const chosen = a.value !== 0n ? b.value : c.value;
    return { text: `(${a.text} ? ${b.text} : ${c.text})`, type: t, value: convert(chosen, t) };
  }
  if (form < 0.56) {
    const t: IntType = BITS[a.type] === 64n ? "unsigned long long" : "unsigned int";
    const width = BITS[t];
    const count = convert(b.value, "unsigned long long") & (width - 1n);
    const left = convert(a.value, t);
    const op = pick(["<<", ">>"]);
    const value = convert(op === "<<" ? left << count : left >> count, t);
    return { text: `((${t})${a.text} ${op} (${b.text} & ${width - 1n}))`, type: t, value };
  }
  // Arithmetic: forced into an unsigned type of the operands' common width.
  const widest = common(a.type, b.type);
  const t: IntType = BITS[widest] === 64n ? "unsigned long long" : "unsigned int";
  const x = convert(a.value, t);
  const y = convert(b.value, t);
  const op = pick(["+", "-", "*", "/", "%", "&", "|", "^"]);
  const suffix = t === "unsigned int" ? "u" : "ULL";
  if (op === "/" || op === "%") {
    const d = y | 1n;
    const value = op === "/" ? x / d : x % d;
    return { text: `((${t})${a.text} ${op} ((${t})${b.text} | 1${suffix}))`, type: t, value };
  }
  const raw = { "+": x + y, "-": x - y, "*": x * y, "&": x & y, "|": x | y, "^": x ^ y }[op]!;
  return { text: `((${t})${a.text} ${op} ${b.text})`, type: t, value: convert(raw, t) };
}

export interface ExpressionProgram {
  source: string;
  expected: string;
}

/** A whole program printing `count` random expressions, one per line, with its exact output. */
export function makeExpressionProgram(seed: number, count: number): ExpressionProgram {
  const random = seededRandom(seed);
  const vars = makeVariables(random);
  const lines = ["#include <stdio.h>", "int main() {"];
  for (const v of vars) lines.push(`    ${v.type} ${v.name} = ${literal(v.value, v.type)};`);
  let expected = "";
  for (let i = 0; i < count; i++) {
    const e = makeExpression(random, vars, 1 + Math.floor(random() * 5));
    const signed = isSigned(e.type);
    const format = signed ? "%lld" : "%llu";
    const cast = signed ? "long long" : "unsigned long long";
    lines.push(`    printf("${format}\\n", (${cast})(${e.text}));`);
    expected += `${e.value}\n`;
  }
  lines.push("    return 0;", "}", "");
  return { source: lines.join("\n"), expected };
}
