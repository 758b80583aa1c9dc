// Host functions that C code can call by name (logit_get, tok_str, hook_set, ...): the decode
// runtime registers them by C signature; the names Ruffian reserves come from the one intrinsic
// table (src/decode/intrinsic-table.ts) so that calling one nobody registered gives a clear
// "not available here" error.
import { GlobalScope } from "../c/ast.js";
import { CompileError } from "../c/errors.js";
import { parse } from "../c/parse.js";
import { preprocess } from "../c/preprocess.js";
import { tokenize } from "../c/tokenize.js";
import type { Type } from "../c/types.js";
import type { VmMemory } from "./memory.js";
import { INTRINSIC_TABLE, intrinsicName } from "../decode/intrinsic-table.js";

/** Every intrinsic name of the Ruffian C dialect, from the one table (seeds: introspection,
 * hooks, interventions, rewind). */
export const KNOWN_INTRINSICS: ReadonlySet<string> = new Set(INTRINSIC_TABLE.map(intrinsicName));

/** What an intrinsic's implementation can do with the calling program's memory. */
export interface IntrinsicContext {
  /** Reads the NUL-terminated string at `ptr` (UTF-8). */
  readString(ptr: number, maxBytes?: number): string;
  /** Writes `text` plus a NUL at `ptr`, at most `maxBytes` bytes including the NUL; returns bytes written without the NUL. */
  writeString(ptr: number, text: string, maxBytes?: number): number;
  readBytes(ptr: number, length: number): Uint8Array;
  writeBytes(ptr: number, bytes: Uint8Array): void;
  readInt(ptr: number): number;
  writeInt(ptr: number, value: number): void;
  readFloat(ptr: number): number;
  writeFloat(ptr: number, value: number): void;
  readDouble(ptr: number): number;
  writeDouble(ptr: number, value: number): void;
  /** True when the session has a user function of that name (e.g. for hook_set). */
  hasFunction(name: string): boolean;
  /** Appends text to the program's stdout. */
  print(text: string): void;
}

export type IntrinsicImpl = (ctx: IntrinsicContext, ...args: any[]) => number | bigint | void;

export interface IntrinsicDef {
  name: string;
  signature: string;
  ty: Type;
  impl: IntrinsicImpl;
}

/** Parsed signatures: every VM session binds the same intrinsics (a server makes one session per
 * request), and parsing ~40 prototypes each time cost milliseconds. Types are never mutated. */
const parsedSignatures = new Map<string, { name: string; ty: Type }>();

/** Parses a C prototype such as "float cosine_sim(int,int,int)" into its name and type. */
export function parseSignature(signature: string): { name: string; ty: Type } {
  let parsed = parsedSignatures.get(signature);
  if (!parsed) parsedSignatures.set(signature, (parsed = parseSignatureText(signature)));
  return parsed;
}

function parseSignatureText(signature: string): { name: string; ty: Type } {
  const text = signature.trim().replace(/;$/, "") + ";";
  let block;
  try {
    block = parse(preprocess(tokenize(text)), new GlobalScope(), {
      alloc: () => {
        throw new Error("an intrinsic signature cannot contain literals");
      },
      write: () => undefined,
      libraryType: () => undefined,
      intrinsicType: () => undefined,
      isKnownIntrinsic: () => false,
    });
  } catch (e) {
    const why = e instanceof CompileError ? e.message : String(e);
    throw new Error(`bad intrinsic signature '${signature}': ${why}`);
  }
  const funcs = [...block.scope.funcs.values()];
  if (funcs.length !== 1 || block.entry)
    throw new Error(`bad intrinsic signature '${signature}': expected one function prototype`);
  const f = funcs[0]!;
  for (const p of f.ty.params!)
    if (p.kind === "struct" || p.kind === "union")
      throw new Error(
        `bad intrinsic signature '${signature}': struct parameters are not supported`,
      );
  return { name: f.name, ty: f.ty };
}

export class IntrinsicRegistry {
  private readonly defs = new Map<string, IntrinsicDef>();

  define(signature: string, impl: IntrinsicImpl): void {
    const { name, ty } = parseSignature(signature);
    this.defs.set(name, { name, signature, ty, impl });
  }
  get(name: string): IntrinsicDef | undefined {
    return this.defs.get(name);
  }
  has(name: string): boolean {
    return this.defs.has(name);
  }
  names(): string[] {
    return [...this.defs.keys()];
  }
}

/** Builds the context handed to intrinsic implementations for one VM memory. */
export function makeIntrinsicContext(
  mem: VmMemory,
  hooks: { hasFunction(name: string): boolean; print(text: string): void },
): IntrinsicContext {
  const check = (p: number, n: number): void => {
    if (!Number.isInteger(p) || p < 0 || p + n > mem.u8.length)
      throw new RangeError("memory access out of bounds");
  };
  return {
    readString: (p, max) => mem.readCString(p, max),
    writeString(p, text, max = 1 << 20) {
      let bytes = Buffer.from(text, "utf8");
      if (bytes.length > max - 1) bytes = bytes.subarray(0, Math.max(0, max - 1));
      check(p, bytes.length + 1);
      mem.u8.set(bytes, p);
      mem.u8[p + bytes.length] = 0;
      return bytes.length;
    },
    readBytes(p, n) {
      check(p, n);
      return mem.u8.slice(p, p + n);
    },
    writeBytes(p, bytes) {
      check(p, bytes.length);
      mem.u8.set(bytes, p);
    },
    readInt(p) {
      check(p, 4);
      return mem.dv.getInt32(p, true);
    },
    writeInt(p, v) {
      check(p, 4);
      mem.dv.setInt32(p, v, true);
    },
    readFloat(p) {
      check(p, 4);
      return mem.dv.getFloat32(p, true);
    },
    writeFloat(p, v) {
      check(p, 4);
      mem.dv.setFloat32(p, v, true);
    },
    readDouble(p) {
      check(p, 8);
      return mem.dv.getFloat64(p, true);
    },
    writeDouble(p, v) {
      check(p, 8);
      mem.dv.setFloat64(p, v, true);
    },
    hasFunction: (name) => hooks.hasFunction(name),
    print: (text) => hooks.print(text),
  };
}
