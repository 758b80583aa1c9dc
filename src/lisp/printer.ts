// Printed representations of Lisp values: `display` form (strings raw) and `write` form (strings
// quoted). Iterative and length-capped, so huge, deeply nested or cyclic lists cannot hang it.
import { Builtin, Closure, NIL, Pair, Sym, UNSPECIFIED, type Value } from "./values.js";

export type PrintMode = "display" | "write";

/** Literal text queued between values while printing a list. */
class Piece {
  constructor(readonly text: string) {}
}

export function formatFloat(x: number): string {
  if (Number.isNaN(x)) return "+nan.0";
  if (x === Infinity) return "+inf.0";
  if (x === -Infinity) return "-inf.0";
  if (Object.is(x, -0)) return "-0.0";
  const text = String(x).replace("e+", "e");
  // Keep floats visibly inexact: 2.0, not 2, so they read back as floats.
  return /[.e]/.test(text) ? text : text + ".0";
}

function writeString(s: string): string {
  let out = '"';
  for (const ch of s) {
    if (ch === '"') out += '\\"';
    else if (ch === "\\") out += "\\\\";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\t") out += "\\t";
    else if (ch === "\r") out += "\\r";
    else if (ch < " " || ch === "\x7f") out += `\\x${ch.codePointAt(0)!.toString(16)};`;
    else out += ch;
  }
  return out + '"';
}

function atomText(v: Value, mode: PrintMode): string {
  switch (typeof v) {
    case "bigint":
      return v.toString();
    case "number":
      return formatFloat(v);
    case "boolean":
      return v ? "#t" : "#f";
    case "string":
      return mode === "write" ? writeString(v) : v;
  }
  if (v instanceof Sym) return v.name;
  if (v === NIL) return "()";
  if (v instanceof Closure) return v.name === "lambda" ? "#<procedure>" : `#<procedure ${v.name}>`;
  if (v instanceof Builtin) return `#<procedure ${v.name}>`;
  if (v === UNSPECIFIED) return "#<void>";
  return "#<unknown>";
}

/** The printed form of `value`, cut to about `maxLength` characters with a trailing "...". */
export function printValue(value: Value, mode: PrintMode = "write", maxLength = 1 << 20): string {
  if (!(value instanceof Pair)) {
    const text = atomText(value, mode);
    return text.length > maxLength ? text.slice(0, maxLength) + "..." : text;
  }
  let out = "";
  // Pending work: values still to print, or literal text between them.
  const work: Array<Value | Piece> = [value];
  while (work.length > 0) {
    if (out.length > maxLength) return out.slice(0, maxLength) + "...";
    const item = work.pop()!;
    if (item instanceof Piece) {
      out += item.text;
      continue;
    }
    const v = item;
    if (!(v instanceof Pair)) {
      out += atomText(v, mode);
      continue;
    }
    out += "(";
    // Walk the spine here, pushing elements in reverse so they print in order.
    const parts: Array<Value | Piece> = [];
    let cur: Value = v;
    let count = 0;
    while (cur instanceof Pair) {
      if (count > 0) parts.push(new Piece(" "));
      parts.push(cur.car);
      cur = cur.cdr;
      // A cyclic or enormous list: stop collecting, the length cap ends the output.
      if (++count > maxLength) {
        parts.push(new Piece(" ..."));
        cur = NIL;
      }
    }
    if (cur !== NIL) parts.push(new Piece(" . "), cur);
    parts.push(new Piece(")"));
    for (let i = parts.length - 1; i >= 0; i--) work.push(parts[i]);
  }
  return out;
}
