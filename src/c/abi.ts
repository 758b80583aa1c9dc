// What a compiled block's functions and its host agree on: the trap codes passed to the host's
// `trap`, the module's globals and tables, and the wasm signature of a C function.
import type { Func } from "./ast.js";
import { ENTRY_NAME } from "./entry.js";
import { funcType, isAggregate, T, valType, type Type } from "./types.js";
import type { FuncSig } from "./wasm.js";

/** Trap codes passed to the host's `trap` import. */
export const TrapCode = {
  divisionByZero: 1,
  stackOverflow: 2,
  assertion: 3,
  exit: 4,
  callDepth: 5,
  badFunctionPointer: 6,
  nullPointer: 7,
  /** Signed overflow: OVERFLOW_BASE + operator index * 2 + (1 for 64-bit); see overflowTrap. */
  overflow: 16,
} as const;

/** The operators whose signed overflow traps, in trap-code order. */
export const OVERFLOW_OPS = ["+", "-", "*", "unary -"] as const;

/** The trap code for overflow of operator `op` on a 32- or 64-bit signed integer. */
export function overflowTrap(op: (typeof OVERFLOW_OPS)[number], is64: boolean): number {
  return TrapCode.overflow + OVERFLOW_OPS.indexOf(op) * 2 + (is64 ? 1 : 0);
}

/** Module globals, in index order; exported under these names. */
export const GLOBAL_SP = 0;
export const GLOBAL_FUEL = 1;
export const GLOBAL_DEPTH = 2;

/** maxCallDepth as the i32 depth counters can hold it (the host's stack ends a recursion long
 * before). */
export function callDepthCap(maxCallDepth: number): number {
  return Math.min(maxCallDepth, 0x7fffffff);
}

/** The fuel the host may hand out at once when the innermost frame of a function that may
 * recurse is `depth` calls deep: no more than the calls still allowed to nest. Every such call
 * burns a unit of fuel, so the depth cannot pass its limit before the fuel runs out, and a
 * function checks its depth only then, on the path that refuels (see FunctionGenerator). */
export function fuelWithinDepth(fuel: number, depth: number, maxCallDepth: number): number {
  return Math.max(0, Math.min(fuel, callDepthCap(maxCallDepth) - depth));
}

/** Table 0 is the host bridge's (imported); table 1 holds the block's function pointers. */
export const HOST_TABLE = 0;
export const FUNCTION_TABLE = 1;

/** Where a block's entry leaves the block's value (8 bytes in the low page, under the
 * allocator's state), so that the entry's wasm signature is `>` whatever the value's type: the
 * signature a block's refuel calls declare anyway. Node 20's V8 keeps a copy of every signature
 * every module declares, for good (docs/c-vm.md, memory), and a returned value cost `runC` a
 * signature of its own per block. */
export const ENTRY_VALUE_ADDR = 504;

/** Where a host library call's arguments and result pass (a slot of 8 bytes each, the result
 * in the first, in the low page under ENTRY_VALUE_ADDR), so that every host call goes through
 * the bridge with the signature `>` and a block declares no signature per library function it
 * calls (see ENTRY_VALUE_ADDR for why that matters). */
export const HOST_FRAME_SLOTS = 4;
export const HOST_FRAME_ADDR = ENTRY_VALUE_ADDR - 8 * HOST_FRAME_SLOTS;

/** Whether a defined function leaves its result at ENTRY_VALUE_ADDR instead of returning it. */
export function leavesValueInMemory(f: Func): boolean {
  return f.name === ENTRY_NAME && f.ty.ret!.kind !== "void";
}

/** The C type whose wasm signature a defined function gets (the entry's returns nothing). */
export function compiledType(f: Func): Type {
  return leavesValueInMemory(f) ? funcType(T.void, []) : f.ty;
}

/** User functions: scalars by value, structs by address; a struct result is written to a
 * caller-provided buffer passed as a hidden first parameter, whose address is returned. */
export function userSig(f: Type): FuncSig {
  const params = f.params!.map(valType);
  if (isAggregate(f.ret!)) params.unshift("i32");
  if (f.variadic) params.push("i32");
  return { params, results: f.ret!.kind === "void" ? [] : [valType(f.ret!)] };
}

/** A function that may recurse is called from its own kind with the fuel left and the calls
 * it may still nest (maxCallDepth - 1 - depth) as two more parameters, and returns the fuel left
 * after its result: both stay in registers along a recursion instead of going through module
 * globals on every call. Everything else calls it through a wrapper with userSig that passes
 * the globals in (see codegen.ts). */
export function meteredSig(f: Type): FuncSig {
  const sig = userSig(f);
  return { params: [...sig.params, "i32", "i32"], results: [...sig.results, "i32"] };
}
