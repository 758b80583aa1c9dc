// Struct and union layout as gcc does it on x86-64 (the System V ABI): member offsets, size,
// alignment, and where each bit-field sits. One pass over the declared members; the parser
// reads the declarations and hands them here.
import { alignTo, type Member, type Type } from "./types.js";

/** One declared member: a named field, a bit-field (named or not), or an anonymous
 * struct/union member (`name` null, `ty` an aggregate) whose members are flattened in. */
export interface MemberDecl {
  name: string | null;
  ty: Type;
  /** Bit-field width (absent for an ordinary member). */
  width?: number;
}

export interface Layout {
  size: number;
  align: number;
  /** Every member by name, those of anonymous members flattened in. */
  members: Member[];
  /** What an initializer list fills in order (an anonymous member is one entry). */
  fields: Member[];
}

/** Lays out members in order. A bit-field goes at the next free bit unless it would cross a
 * boundary of its declared type's alignment, in which case it starts the next unit; `:0`
 * moves to the next unit; an unnamed bit-field takes space but, as in gcc, does not raise the
 * struct's alignment. A bit-field member's type records its unit-relative bit position; the
 * member's offset is the unit's (aligned to the declared type, so a load of the declared type
 * at that offset holds every bit of the field). */
export function layoutMembers(kind: "struct" | "union", decls: MemberDecl[]): Layout {
  const members: Member[] = [];
  const fields: Member[] = [];
  let bit = 0; // struct: next free bit
  let size = 0; // union: largest member
  let align = 1;
  for (const d of decls) {
    if (d.width !== undefined) {
      const unitBits = d.ty.align * 8;
      if (d.width === 0) {
        if (kind === "struct") bit = alignTo(bit, unitBits);
        continue;
      }
      let at = kind === "struct" ? bit : 0;
      if (Math.floor(at / unitBits) !== Math.floor((at + d.width - 1) / unitBits))
        at = alignTo(at, unitBits);
      const unit = Math.floor(at / unitBits) * d.ty.align;
      if (d.name !== null) {
        const ty: Type = { ...d.ty, bitField: { offset: at - unit * 8, width: d.width } };
        const m = { name: d.name, ty, offset: unit };
        members.push(m);
        fields.push(m);
        align = Math.max(align, d.ty.align);
      }
      if (kind === "struct") bit = at + d.width;
      else size = Math.max(size, Math.ceil(d.width / 8));
      continue;
    }
    const offset = kind === "struct" ? alignTo(Math.ceil(bit / 8), d.ty.align) : 0;
    if (d.name === null) {
      for (const m of d.ty.members ?? []) members.push({ ...m, offset: offset + m.offset });
      fields.push({ name: "", ty: d.ty, offset });
    } else {
      const m = { name: d.name, ty: d.ty, offset };
      members.push(m);
      fields.push(m);
    }
    if (kind === "struct") bit = (offset + d.ty.size) * 8;
    else size = Math.max(size, d.ty.size);
    align = Math.max(align, d.ty.align);
  }
  if (kind === "struct") size = Math.ceil(bit / 8);
  return { size: alignTo(size, align), align, members, fields };
}
