// Constant folding, as the tree is built: arithmetic and conversions whose operands are
// literals become literals (so array sizes, case labels and enumerators are plain numbers);
// and the evaluation of static initializers (numbers, casts, addresses of globals and literals).
import {
  numNode,
  type BinaryNode,
  type CondNode,
  type Expr,
  type LogicalNode,
  type NumNode,
  type UnaryNode,
} from "./ast.js";
import { T, isFloat, type Type } from "./types.js";

/** Converts a literal to `ty` at compile time, as the conversion would at run time. */
export function foldNum(n: NumNode, ty: Type): NumNode {
  if (isFloat(ty)) {
    const v = n.fval !== undefined ? n.fval : Number(BigInt.asIntN(64, n.ival));
    const fromUnsigned = n.ty.unsigned && n.fval === undefined;
    const val = fromUnsigned ? Number(BigInt.asUintN(64, n.ival)) : v;
    return numNode(ty.kind === "float" ? Math.fround(val) : val, ty, n);
  }
  let iv: bigint;
  if (n.fval !== undefined) {
    if (!Number.isFinite(n.fval)) iv = 0n;
    else iv = BigInt(Math.trunc(n.fval));
  } else iv = n.ival;
  return numNode(wrapInt(iv, ty), ty, n);
}

/** Whether a literal is nonzero (its truth value as a condition). */
function isTrue(n: NumNode): boolean {
  return n.fval !== undefined ? n.fval !== 0 : n.ival !== 0n;
}

/** Folds `!`, `&&`, `||` and `?:` on literal operands: they are integer constant expressions,
 * so `int a[1 && 1]` is an ordinary array, not a variable-length one (which a goto past its
 * declaration would leave unallocated). */
export function foldLogical(n: LogicalNode | CondNode | UnaryNode): Expr {
  if (n.kind === "cond") {
    const c = n.cond;
    if (c.kind !== "num" || n.then.kind !== "num" || n.els.kind !== "num") return n;
    return isTrue(c) ? n.then : n.els;
  }
  if (n.kind === "not") return n.lhs.kind === "num" ? numNode(isTrue(n.lhs) ? 0n : 1n, n.ty, n) : n;
  if (n.kind !== "logand" && n.kind !== "logor") return n;
  const l = n.lhs;
  const r = n.rhs;
  if (l.kind !== "num" || r.kind !== "num") return n;
  const v = n.kind === "logand" ? isTrue(l) && isTrue(r) : isTrue(l) || isTrue(r);
  return numNode(v ? 1n : 0n, n.ty, n);
}

/** Folds arithmetic on two literal operands so constant expressions stay literals. */
export function fold(n: BinaryNode): Expr {
  const l = n.lhs;
  const r = n.rhs;
  if (l.kind !== "num" || r.kind !== "num") return n;
  const ty = n.ty;
  if (isFloat(ty)) {
    // The operands were converted to `ty`, so both are floating literals.
    const a = floatValue(l);
    const b = floatValue(r);
    let v: number;
    switch (n.op) {
      case "+":
        v = a + b;
        break;
      case "-":
        v = a - b;
        break;
      case "*":
        v = a * b;
        break;
      case "/":
        v = a / b;
        break;
      default:
        return n;
    }
    return numNode(ty.kind === "float" ? Math.fround(v) : v, ty, n);
  }
  const signed = !ty.unsigned;
  const bits = ty.kind === "bool" ? 1 : ty.size * 8;
  const a = signed ? BigInt.asIntN(bits, intValue(l)) : BigInt.asUintN(bits, intValue(l));
  const b = signed ? BigInt.asIntN(bits, intValue(r)) : BigInt.asUintN(bits, intValue(r));
  let v: bigint;
  switch (n.op) {
    case "+":
      v = a + b;
      break;
    case "-":
      v = a - b;
      break;
    case "*":
      v = a * b;
      break;
    case "/":
      if (b === 0n) return n;
      v = a / b;
      break;
    case "%":
      if (b === 0n) return n;
      v = a % b;
      break;
    case "&":
      v = a & b;
      break;
    case "|":
      v = a | b;
      break;
    case "^":
      v = a ^ b;
      break;
    case "<<":
      v = a << (b & BigInt(bits - 1));
      break;
    case ">>":
      v = a >> (b & BigInt(bits - 1));
      break;
    default:
      return n;
  }
  // Signed overflow is left to run time, where it traps with this operator's position.
  if (n.checked && wrapInt(v, ty) !== v) return n;
  return numNode(wrapInt(v, ty), ty, n);
}

/** A literal's value as a double. */
export const floatValue = (n: NumNode): number => n.fval ?? Number(n.ival);
/** A literal's value as an integer (a floating one truncated as C converts it). */
export const intValue = (n: NumNode): bigint => n.ival ?? truncToBigInt(n.fval);

/** Evaluates a constant expression (numbers, casts, addresses of globals and literals). */
export function constValue(n: Expr): bigint | number {
  switch (n.kind) {
    case "num":
      return n.fval !== undefined ? n.fval : n.ival;
    case "str":
      return BigInt(n.addr);
    case "cast": {
      const v = constValue(n.lhs);
      const ty = n.ty;
      if (isFloat(ty))
        return typeof v === "number"
          ? v
          : Number(n.lhs.ty.unsigned ? BigInt.asUintN(64, v) : BigInt.asIntN(64, v));
      const iv = typeof v === "number" ? truncToBigInt(v) : v;
      return wrapInt(iv, ty.kind === "ptr" ? T.uint : ty);
    }
    case "addr":
      return constAddress(n.lhs);
    case "var":
      if (n.v.global && (n.ty.kind === "array" || n.ty.kind === "func")) return BigInt(n.v.addr);
      throw new NotConstant();
    case "binary": {
      const a = constValue(n.lhs);
      const b = constValue(n.rhs);
      if (typeof a === "bigint" && typeof b === "bigint") {
        switch (n.op) {
          case "+":
            return a + b;
          case "-":
            return a - b;
          case "*":
            return a * b;
        }
      }
      throw new NotConstant();
    }
    case "neg": {
      const v = constValue(n.lhs);
      return typeof v === "number" ? -v : -v;
    }
    default:
      throw new NotConstant();
  }
}

function constAddress(n: Expr): bigint {
  if (n.kind === "var" && n.v.global) return BigInt(n.v.addr);
  if (n.kind === "str") return BigInt(n.addr);
  if (n.kind === "member") return constAddress(n.lhs) + BigInt(n.member.offset);
  if (n.kind === "deref") {
    const v = constValue(n.lhs);
    if (typeof v === "bigint") return v;
  }
  throw new NotConstant();
}

/** Thrown while evaluating an expression whose value is only known at run time. */
export class NotConstant extends Error {}

/** A double converted to an integer as a conversion in C does it on x86-64: NaN and out of
 * range values give the "integer indefinite" (INT64_MIN) rather than throwing. */
export function truncToBigInt(v: number): bigint {
  return Number.isFinite(v) ? BigInt(Math.trunc(v)) : -(1n << 63n);
}

/** Truncates an integer to the width and signedness of `ty`. */
export function wrapInt(v: bigint, ty: Type): bigint {
  if (ty.kind === "bool") return v !== 0n ? 1n : 0n;
  const bits = Math.min(ty.size, 8) * 8;
  return ty.unsigned ? BigInt.asUintN(bits, v) : BigInt.asIntN(bits, v);
}
