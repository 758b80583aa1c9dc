// The host bridge: one small wasm module per process whose table holds a wasm thunk for every
// host function (the VM's core calls and the host half of the C library). Compiled blocks reach
// the host through that imported table rather than by importing JS functions: V8 compiles a
// JS-call wrapper per import signature for every module that imports JS functions (tens of µs
// each, most of a short block's compile time), while a table of wasm functions needs none.
import { HOST_FRAME_SLOTS } from "./abi.js";
import { INLINE_FUNCTIONS } from "./library.js";
import { valType, type Type } from "./types.js";
import { FuncBuilder, TypeTable, encodeModule, type FuncSig, type ValType } from "./wasm.js";

/** The bridge module's name, which its frames carry in stack traces. */
export const BRIDGE_MODULE_NAME = "ruffian-host";

/** The import module and name of the bridge's table in every compiled block. */
export const BRIDGE_TABLE = { module: "env", name: "host" } as const;

/** Calls the VM itself provides, ahead of the C library in the bridge's table. */
export const CORE_CALLS: readonly { name: string; sig: FuncSig }[] = [
  { name: "trap", sig: { params: ["i32", "i32", "i32"], results: [] } },
  { name: "refuel", sig: { params: [], results: [] } },
];

/** Host and intrinsic calls never see BigInt: 64-bit integers cross the boundary as doubles. */
export function hostScalar(t: Type): ValType {
  const v = valType(t);
  return v === "i64" || v === "f32" ? "f64" : v;
}

/** The wasm signature of a host function or intrinsic (variadic ones get the vararg area). */
export function hostSig(f: Type): FuncSig {
  const params = f.params!.map(hostScalar);
  if (f.variadic) params.push("i32");
  return { params, results: f.ret!.kind === "void" ? [] : [hostScalar(f.ret!)] };
}

export interface BridgeEntry {
  /** "core" for CORE_CALLS, "host" for a C library function implemented by the host. */
  kind: "core" | "host";
  name: string;
  /** The signature of the table's slot. */
  sig: FuncSig;
  /** A host function's own signature, whose arguments and result pass through the frame at
   * HOST_FRAME_ADDR while the slot's signature is `>`. */
  frame?: FuncSig;
}

/** The signature of every host library function's slot (see HOST_FRAME_ADDR). */
export const FRAMED_SIG: FuncSig = { params: [], results: [] };

/** The bridge's table: every entry with its slot (its index). */
export interface BridgeLayout {
  entries: BridgeEntry[];
  slots: Map<string, number>;
}

const layouts = new WeakMap<Map<string, Type>, BridgeLayout>();

/** The bridge's table for a set of host functions (computed once per set). */
export function bridgeLayout(hostFunctions: Map<string, Type>): BridgeLayout {
  let layout = layouts.get(hostFunctions);
  if (!layout) {
    const entries: BridgeEntry[] = CORE_CALLS.map((c) => ({ kind: "core", ...c }));
    for (const [name, ty] of hostFunctions) {
      if (INLINE_FUNCTIONS.has(name)) continue;
      const frame = hostSig(ty);
      if (frame.params.length > HOST_FRAME_SLOTS)
        throw new Error(`host function '${name}' takes more than ${HOST_FRAME_SLOTS} arguments`);
      entries.push({ kind: "host", name, sig: FRAMED_SIG, frame });
    }
    layout = { entries, slots: new Map(entries.map((e, i) => [e.name, i])) };
    layouts.set(hostFunctions, layout);
  }
  return layout;
}

/** The bridge module: imports each entry as `<kind>.<name>` and exports table `host`, whose slot
 * i holds a thunk that passes its arguments to entry i. */
export function encodeHostBridge(layout: BridgeLayout): Uint8Array {
  const { entries } = layout;
  const functions = entries.map((e, i) => {
    const body = new FuncBuilder(e.sig.params.length);
    e.sig.params.forEach((_, k) => body.localGet(k));
    body.call(i);
    return { sig: e.sig, body };
  });
  return encodeModule(
    {
      name: BRIDGE_MODULE_NAME,
      imports: entries.map((e) => ({ module: e.kind, name: e.name, sig: e.sig })),
      functions,
      globals: [],
      table: entries.map((_, i) => entries.length + i),
      exportTable: "host",
    },
    new TypeTable(),
  ).bytes.slice();
}
