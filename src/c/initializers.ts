// Initializers: braced lists (with brace elision and designators, nested ones included) read
// into an Initializer tree, and the static data a global's constant initializer serializes to.
// A global whose initializer is not constant gets a statement in the block's entry instead.
import type { InitItem, Initializer, Var } from "./ast.js";
import { declNode, varNode } from "./ast.js";
import { ensureEntry } from "./entry.js";
import { typeError, type Pos } from "./errors.js";
import { NotConstant, constValue, truncToBigInt } from "./fold.js";
import type { Parser } from "./parse.js";
import {
  arrayOf,
  isAggregate,
  isFloat,
  isInteger,
  sameType,
  typeName,
  type Member,
  type Type,
} from "./types.js";

/** Writes a global's initial value; a non-constant one becomes a statement of the entry. */
export function staticInit(p: Parser, v: Var, init: Initializer | undefined, at: Pos): void {
  const bytes = new Uint8Array(v.ty.size);
  if (!init) {
    p.inits.push({ addr: v.addr, bytes });
    return;
  }
  try {
    serialize(init, bytes, 0);
    p.inits.push({ addr: v.addr, bytes });
  } catch (e) {
    if (e instanceof RangeError)
      throw typeError(
        `initializer of '${v.name}' is not supported (it does not fit the object's layout)`,
        at,
      );
    if (!(e instanceof NotConstant)) throw e;
    if (p.scopes.length > 0 || p.fn)
      throw typeError(`initializer of static '${v.name}' is not a constant`, at);
    // At top level with statements around it, run the initializer when the block runs.
    p.inits.push({ addr: v.addr, bytes: new Uint8Array(v.ty.size) });
    const entry = ensureEntry(p, at);
    const saved = p.fn;
    p.fn = entry;
    const ref = varNode(at, v, v.ty);
    p.entry.stmts.push(declNode(at, v, ref, init));
    p.fn = saved;
  }
}

/** Writes a constant initializer's bytes at `offset` of `out` (throws NotConstant if it is not). */
function serialize(init: Initializer, out: Uint8Array, offset: number): void {
  if (init.bytes) {
    out.set(init.bytes.slice(0, init.ty.size), offset);
    return;
  }
  if (init.items) {
    for (const it of init.items) serialize(it.init, out, offset + it.offset);
    return;
  }
  const dv = new DataView(out.buffer, out.byteOffset, out.byteLength);
  const ty = init.ty;
  const value = constValue(init.expr);
  if (isFloat(ty)) {
    const f = typeof value === "number" ? value : Number(BigInt.asIntN(64, value));
    if (ty.kind === "float") dv.setFloat32(offset, f, true);
    else dv.setFloat64(offset, f, true);
    return;
  }
  const iv = typeof value === "number" ? truncToBigInt(value) : value;
  if (ty.bitField) {
    // Merge the field's bits into its storage unit, which other fields may share.
    const { offset: lo, width } = ty.bitField;
    const mask = ((1n << BigInt(width)) - 1n) << BigInt(lo);
    let unit = 0n;
    for (let i = ty.size - 1; i >= 0; i--) unit = (unit << 8n) | BigInt(out[offset + i]!);
    unit = (unit & ~mask) | ((iv << BigInt(lo)) & mask);
    for (let i = 0; i < ty.size; i++) out[offset + i] = Number((unit >> BigInt(8 * i)) & 0xffn);
    return;
  }
  switch (ty.size) {
    case 1:
      dv.setUint8(offset, Number(BigInt.asUintN(8, iv)));
      break;
    case 2:
      dv.setUint16(offset, Number(BigInt.asUintN(16, iv)), true);
      break;
    case 4:
      dv.setUint32(offset, Number(BigInt.asUintN(32, iv)), true);
      break;
    case 8:
      dv.setBigUint64(offset, BigInt.asUintN(64, iv), true);
      break;
    default:
      throw new NotConstant();
  }
}

// initializer = "{" initializer ("," initializer)* ","? "}" | assign
export function initializer(p: Parser, ty: Type): Initializer {
  const at = p.tok;
  if (ty.kind === "array") {
    const wideOk = ty.base!.size === 4 && isInteger(ty.base!);
    if (p.tok.kind === "str" && (ty.base!.size === 1 || (wideOk && p.tok.units))) {
      const { bytes, elem } = p.stringLiteral();
      if (elem.size !== ty.base!.size)
        throw typeError(`cannot initialize '${typeName(ty)}' with a wide string`, at);
      const count = bytes.length / elem.size;
      const len = ty.len! < 0 ? count : ty.len!;
      const aty = arrayOf(ty.base!, len);
      return { ty: aty, bytes: bytes.slice(0, len * elem.size) };
    }
    if (p.is("{") && p.peek().kind === "str" && ty.base!.size === 1) {
      p.pos++;
      const r = initializer(p, ty);
      p.consume(",");
      p.expect("}");
      return r;
    }
    p.expect("{");
    const items: InitItem[] = [];
    let i = 0;
    let max = 0;
    while (!p.consume("}")) {
      let designated = false;
      if (p.consume("[")) {
        i = arrayDesignator(p, ty);
        designated = true;
      } else if (ty.len! >= 0 && i >= ty.len!)
        throw typeError("too many elements in array initializer", p.tok);
      const init = designated ? designation(p, ty.base!) : elementInit(p, ty.base!);
      items.push({ offset: i * ty.base!.size, init });
      i++;
      max = Math.max(max, i);
      if (!p.consume(",")) {
        p.expect("}");
        break;
      }
    }
    const len = ty.len! < 0 ? max : ty.len!;
    return { ty: arrayOf(ty.base!, len), items };
  }
  if (isAggregate(ty)) {
    if (!p.is("{")) {
      const e = p.assign();
      if (!isAggregate(e.ty) || !sameType(e.ty, ty))
        throw typeError(`cannot initialize '${typeName(ty)}' with '${typeName(e.ty)}'`, at);
      return { ty, expr: e };
    }
    p.expect("{");
    const items: InitItem[] = [];
    let k = 0;
    const members = ty.fields ?? ty.members ?? [];
    while (!p.consume("}")) {
      let m: Member | undefined;
      let init: Initializer;
      if (p.consume(".")) {
        m = memberDesignator(p, ty);
        const named = m;
        k = members.findIndex(
          (x) =>
            x.name === named.name ||
            (x.name === "" && x.ty.members?.some((y) => y.name === named.name)),
        );
        init = designation(p, m.ty);
      } else {
        m = members[k];
        if (!m) throw typeError("too many elements in struct initializer", p.tok);
        init = elementInit(p, m.ty);
      }
      items.push({ offset: m.offset, init });
      k++;
      if (ty.kind === "union") k = members.length;
      if (!p.consume(",")) {
        p.expect("}");
        break;
      }
    }
    return { ty, items };
  }
  if (p.is("{")) {
    p.pos++;
    const r = initializer(p, ty);
    p.consume(",");
    p.expect("}");
    return r;
  }
  const e = p.assign();
  return { ty, expr: p.assignConvert(e, ty, at) };
}

// designation = ("[" const-expr "]" | "." ident)* "=" initializer
/** The rest of a designator chain (`.color.g = 9`, `[2].x = 1`) after its first designator
 * chose a subobject of type `ty`: an initializer for `ty` that fills only the designated part
 * (later entries of the list may fill others; each overrides what it names). */
function designation(p: Parser, ty: Type): Initializer {
  if (p.consume(".")) {
    const m = memberDesignator(p, ty);
    return { ty, items: [{ offset: m.offset, init: designation(p, m.ty) }] };
  }
  if (p.consume("[")) {
    const i = arrayDesignator(p, ty);
    return { ty, items: [{ offset: i * ty.base!.size, init: designation(p, ty.base!) }] };
  }
  p.expect("=");
  return elementInit(p, ty);
}

/** `.name` in an initializer (the "." read): the member of `ty` it names, which may be a
 * member of an anonymous struct/union member. */
function memberDesignator(p: Parser, ty: Type): Member {
  const name = p.ident();
  if (!isAggregate(ty))
    throw typeError(
      `member designator '.${name.text}' for '${typeName(ty)}', which is not a struct`,
      name,
    );
  const m = (ty.members ?? []).find((x) => x.name === name.text);
  if (!m) throw typeError(`no member named '${name.text}' in '${typeName(ty)}'`, name);
  return m;
}

/** `[index]` in an initializer (the "[" read): the index, checked against `ty`. */
function arrayDesignator(p: Parser, ty: Type): number {
  const at = p.tok;
  if (ty.kind !== "array")
    throw typeError(`array designator for '${typeName(ty)}', which is not an array`, at);
  const i = Number(p.constInt());
  if (i < 0) throw typeError(`array designator [${i}] is negative`, at);
  if (ty.len! >= 0 && i >= ty.len!)
    throw typeError(`array designator [${i}] is past the end of '${typeName(ty)}'`, at);
  p.expect("]");
  return i;
}

/** An element of a braced list: an aggregate element may leave out its own braces
 * (`int m[3][3] = {0}`, `struct P ps[2] = {1, 2, 3, 4}`). */
function elementInit(p: Parser, ty: Type): Initializer {
  const aggregate = ty.kind === "array" || isAggregate(ty);
  const stringForChars = ty.kind === "array" && ty.base!.size === 1 && p.tok.kind === "str";
  if (!aggregate || p.is("{") || stringForChars) return initializer(p, ty);
  // A struct-typed expression (e.g. another variable) initializes the whole member.
  if (isAggregate(ty) && !p.is("{")) {
    const save = p.pos;
    try {
      const e = p.assign();
      if (isAggregate(e.ty) && sameType(e.ty, ty)) return { ty, expr: e };
    } catch {
      /* not an expression of that struct type: read it brace-less below */
    }
    p.pos = save;
  }
  const items: InitItem[] = [];
  const slots: { offset: number; ty: Type }[] =
    ty.kind === "array"
      ? Array.from({ length: Math.max(ty.len!, 0) }, (_, i) => ({
          offset: i * ty.base!.size,
          ty: ty.base!,
        }))
      : (ty.fields ?? ty.members ?? [])
          .slice(0, ty.kind === "union" ? 1 : undefined)
          .map((m) => ({ offset: m.offset, ty: m.ty }));
  for (let i = 0; i < slots.length && !p.is("}"); i++) {
    if (i > 0) {
      if (!p.is(",") || p.peek().text === "}") break;
      p.pos++;
    }
    items.push({ offset: slots[i]!.offset, init: elementInit(p, slots[i]!.ty) });
  }
  return { ty, items };
}
