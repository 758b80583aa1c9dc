// Stage 4 support: the C type system of Ruffian's dialect (LP64 sizes; pointer values are 32-bit
// addresses into wasm memory), the usual arithmetic conversions, and the wasm value type each C type lives in.
import type { ValType } from "./wasm.js";

export type TypeKind =
  | "void"
  | "bool"
  | "char"
  | "short"
  | "int"
  | "long"
  | "float"
  | "double"
  | "enum"
  | "ptr"
  | "array"
  | "struct"
  | "union"
  | "func";

export interface Member {
  name: string;
  ty: Type;
  offset: number;
}

export interface Type {
  kind: TypeKind;
  size: number;
  align: number;
  unsigned?: boolean;
  isConst?: boolean;
  /** ptr/array: the element type. */
  base?: Type;
  /** array: element count (-1 while incomplete, e.g. `int a[] = {...}`). */
  len?: number;
  /** struct/union: every member by name (those of anonymous struct/union members flattened in). */
  members?: Member[];
  /** struct/union: the members an initializer list fills in order, where an anonymous
   * struct/union member is one entry (absent when that is just `members`). */
  fields?: Member[];
  tag?: string;
  complete?: boolean;
  /** func */
  ret?: Type;
  params?: Type[];
  variadic?: boolean;
  /** func: declared with `()`, parameters unspecified. */
  oldStyle?: boolean;
  /** func: parameter names as written (for definitions). */
  paramNames?: { text: string; line: number; col: number }[];
  /** Variable-length array: its length expression, and the hidden local holding the count. */
  vlaLen?: import("./ast.js").Expr;
  vlaCount?: import("./ast.js").Var;
  /** Name given by the typedef or spelling, used in messages ("int", "char *"). */
  name?: string;
  /** A bit-field member's type: its bits within the storage unit of the declared type that
   * starts at the member's offset. */
  bitField?: BitField;
  /** enum: some enumerator is negative (otherwise gcc gives it an unsigned underlying type,
   * which decides how a bit-field of the enum reads back). */
  negative?: boolean;
}

export interface BitField {
  /** The field's lowest bit, counted from the storage unit's least significant bit. */
  offset: number;
  width: number;
}

/** A type with every field present, in one order: types then share one hidden class (or
 * the few a property's value kind adds), so the parser's and code generator's reads of `kind`,
 * `size` and `base` stay monomorphic; literals of differing fields made them megamorphic. A
 * spread copy (`{ ...ty, isConst: true }`) keeps the class. */
export function newType(kind: TypeKind, size: number, align: number): Type {
  return {
    kind,
    size,
    align,
    unsigned: undefined,
    isConst: undefined,
    base: undefined,
    len: undefined,
    members: undefined,
    fields: undefined,
    tag: undefined,
    complete: undefined,
    ret: undefined,
    params: undefined,
    variadic: undefined,
    oldStyle: undefined,
    paramNames: undefined,
    vlaLen: undefined,
    vlaCount: undefined,
    name: undefined,
    bitField: undefined,
    negative: undefined,
  };
}

const prim = (kind: TypeKind, size: number, unsigned = false): Type => {
  const t = newType(kind, size, Math.max(size, 1));
  t.unsigned = unsigned;
  return t;
};

export const T = {
  void: prim("void", 1),
  bool: prim("bool", 1, true),
  char: prim("char", 1),
  uchar: prim("char", 1, true),
  short: prim("short", 2),
  ushort: prim("short", 2, true),
  int: prim("int", 4),
  uint: prim("int", 4, true),
  long: prim("long", 8),
  ulong: prim("long", 8, true),
  float: prim("float", 4),
  double: prim("double", 8),
};

/** Pointers are 32-bit values (wasm32 addresses) stored in 8-byte slots, so sizeof and struct
 * layouts match gcc on x86-64 (LP64); loads read the low half, and the high half stays zero. */
export const pointerTo = (base: Type): Type => {
  const t = newType("ptr", 8, 8);
  t.base = base;
  t.unsigned = true;
  return t;
};

export const arrayOf = (base: Type, len: number): Type => {
  const t = newType("array", len < 0 ? 0 : base.size * len, base.align);
  t.base = base;
  t.len = len;
  return t;
};

export const funcType = (ret: Type, params: Type[], variadic = false): Type => {
  const t = newType("func", 1, 1);
  t.ret = ret;
  t.params = params;
  t.variadic = variadic;
  return t;
};

export const enumType = (): Type => newType("enum", 4, 4);

export const isInteger = (t: Type): boolean =>
  t.kind === "bool" ||
  t.kind === "char" ||
  t.kind === "short" ||
  t.kind === "int" ||
  t.kind === "long" ||
  t.kind === "enum";

export const isFloat = (t: Type): boolean => t.kind === "float" || t.kind === "double";
export const isNumeric = (t: Type): boolean => isInteger(t) || isFloat(t);
export const isPointerLike = (t: Type): boolean => t.kind === "ptr" || t.kind === "array";
export const isScalar = (t: Type): boolean => isNumeric(t) || t.kind === "ptr";
export const isAggregate = (t: Type): boolean => t.kind === "struct" || t.kind === "union";

/** The wasm value type an rvalue of this C type occupies on the operand stack. */
export function valType(t: Type): ValType {
  switch (t.kind) {
    case "long":
      return "i64";
    case "float":
      return "f32";
    case "double":
      return "f64";
    default:
      return "i32";
  }
}

/** Integer promotion: anything narrower than int becomes int, and so does a bit-field whose
 * values all fit in int (gcc: also one declared long); a 32-bit unsigned one becomes unsigned. */
export function promote(t: Type): Type {
  if (t.bitField) {
    const { width } = t.bitField;
    if (width < 32 || (width === 32 && !t.unsigned)) return T.int;
    if (width === 32) return T.uint;
    return t.unsigned ? T.ulong : T.long;
  }
  if (t.kind === "bool" || t.kind === "char" || t.kind === "short" || t.kind === "enum")
    return T.int;
  return t;
}

/** The common type of a binary arithmetic operation (C11 6.3.1.8, LP64). */
export function usualArith(a: Type, b: Type): Type {
  if (a.kind === "double" || b.kind === "double") return T.double;
  if (a.kind === "float" || b.kind === "float") return T.float;
  const pa = promote(a);
  const pb = promote(b);
  if (pa.kind === "long" || pb.kind === "long") {
    const unsigned = (pa.kind === "long" && pa.unsigned) || (pb.kind === "long" && pb.unsigned);
    return unsigned ? T.ulong : T.long;
  }
  return pa.unsigned || pb.unsigned ? T.uint : T.int;
}

export function typeName(t: Type): string {
  if (t.name) return t.name;
  switch (t.kind) {
    case "ptr":
      return t.base!.kind === "func"
        ? `${typeName(t.base!.ret!)} (*)()`
        : `${typeName(t.base!)} *`.replace("* *", "**");
    case "array":
      return `${typeName(t.base!)}[${t.len! >= 0 ? t.len : ""}]`;
    case "struct":
    case "union":
      return `${t.kind} ${t.tag ?? "<anonymous>"}`;
    case "func":
      return `${typeName(t.ret!)} ()`;
    case "enum":
      return "int";
    case "bool":
      return "_Bool";
    case "long":
      return t.unsigned ? "unsigned long" : "long";
    default:
      return (t.unsigned ? "unsigned " : "") + t.kind;
  }
}

export const sameType = (a: Type, b: Type): boolean => {
  if (a === b) return true;
  if (a.kind !== b.kind) return false;
  if (a.kind === "ptr" || a.kind === "array") return sameType(a.base!, b.base!);
  if (a.kind === "struct" || a.kind === "union") return a.members === b.members;
  return !!a.unsigned === !!b.unsigned && a.size === b.size;
};

export const alignTo = (n: number, a: number): number => Math.ceil(n / a) * a;

/** 8-byte slots a variadic argument takes: one per scalar, a struct's size rounded up. */
export function varargSlots(t: Type): number {
  return isAggregate(t) ? Math.max(1, Math.ceil(t.size / 8)) : 1;
}
