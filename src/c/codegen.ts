// Stage 5: turns typed functions into one WebAssembly module: which functions it holds and
// imports, their table and exports, and which may recurse; each function's body comes from
// function.ts, its metering from metering.ts, and the trap codes and globals from abi.ts.
import { compiledType, GLOBAL_DEPTH, GLOBAL_FUEL, GLOBAL_SP, meteredSig, userSig } from "./abi.js";
import type { Func, Var } from "./ast.js";
import { CompileError } from "./errors.js";
import { FunctionGenerator, meteredWrapper, type ModuleContext } from "./function.js";
import { BRIDGE_TABLE, bridgeLayout, hostSig, type BridgeLayout } from "./host-bridge.js";
import { INLINE_FUNCTIONS } from "./library.js";
import { LoopNest } from "./metering.js";
import type { Type } from "./types.js";
import {
  encodeModule,
  TypeTable,
  type FuncSig,
  type GlobalDef,
  type ImportedFunc,
  type ModuleSpec,
} from "./wasm.js";

export {
  ENTRY_VALUE_ADDR,
  fuelWithinDepth,
  GLOBAL_DEPTH,
  GLOBAL_FUEL,
  GLOBAL_SP,
  HOST_FRAME_ADDR,
  OVERFLOW_OPS,
  TrapCode,
} from "./abi.js";
export { LONG_RUNNING_ITERATIONS } from "./metering.js";

export interface CodegenOptions {
  /** Every function visible (user, C library, prototypes). */
  funcs: ReadonlyMap<string, Func>;
  /** Functions to export by name (the entry, `main`, or a function called from the host). */
  roots: string[];
  /** Host-implemented library functions and their C types. */
  hostFunctions: Map<string, Type>;
  /** Registered intrinsics and their C types. */
  intrinsics: Map<string, Type>;
  /** Session-stable table slot for a function used as a value. */
  slotOf(name: string): number;
  /** Every function that holds a table slot so far (all must be present in the table). */
  slotted(): Map<string, number>;
  memoryPages: { min: number; max: number };
  /** Lowest legal shadow-stack address (below it: stack overflow). */
  stackLow: number;
  maxCallDepth: number;
  /** Signed integer arithmetic wraps (gcc's -fwrapv) instead of trapping on overflow. */
  wrapv?: boolean;
  /** Dereferencing an address below this traps as a null pointer dereference (0: no check). */
  nullGuard?: number;
  /** Mark the functions of a block not predicted to run long for lazy compilation (a
   * compilation-hints section; see src/vm/tiers.ts). */
  lazyHints?: boolean;
}

export interface CompiledModule {
  /** The module's bytes: valid only until the next module is generated (see EncodedModule). */
  bytes: Uint8Array;
  /** Per defined function: module offset of its code and its (offset, line, col) triples. */
  positions: { codeStart: number; entries: number[]; traps: number[] }[];
  /** Imported functions, in import order: the intrinsics the block calls. */
  imports: { kind: "intrinsic"; name: string; sig: FuncSig }[];
  /** Host library functions the block calls (through the host bridge's table). */
  hostCalls: string[];
  /** Exported user functions and their C types. */
  exports: Map<string, Type>;
  /** A loop nest is predicted to run long (see LoopNest): worth optimizing up front. */
  longRunning: boolean;
}

/** The module's globals, at GLOBAL_SP, GLOBAL_FUEL and GLOBAL_DEPTH: exported, so that the
 * host sets the stack pointer, fuel and depth before a run and reads the fuel back. (The
 * module's function table is not exported: the host never reads it.) */
const MODULE_GLOBALS: GlobalDef[] = (() => {
  const globals: GlobalDef[] = [];
  globals[GLOBAL_SP] = { type: "i32", mutable: true, init: 0, exportName: "sp" };
  globals[GLOBAL_FUEL] = { type: "i32", mutable: true, init: 0, exportName: "fuel" };
  globals[GLOBAL_DEPTH] = { type: "i32", mutable: true, init: 0, exportName: "depth" };
  return globals;
})();

const NO_IMPORTS: ImportedFunc[] = [];

/** The bridge table's import, made once per bridge layout rather than per block. */
const tableImports = new WeakMap<BridgeLayout, NonNullable<ModuleSpec["importedTable"]>>();
function bridgeTableImport(bridge: BridgeLayout): NonNullable<ModuleSpec["importedTable"]> {
  let spec = tableImports.get(bridge);
  if (!spec) tableImports.set(bridge, (spec = { ...BRIDGE_TABLE, size: bridge.entries.length }));
  return spec;
}

/** Compiles the functions reachable from `roots` into a module. */
export function generateModule(opts: CodegenOptions): CompiledModule {
  const types = new TypeTable();
  const imports: CompiledModule["imports"] = [];
  const importIndex = new Map<string, number>();
  const bridge = bridgeLayout(opts.hostFunctions);
  const hostCalls: string[] = [];
  const order: Func[] = [];
  const funcIndex = new Map<string, number>();

  // Reachability: user/C-library functions become module functions, the rest imports.
  const reach: Reach = { opts, order, seen: new Set(), hostCalls, imports, importIndex };
  for (const r of opts.roots) visit(reach, r, null);
  for (const [name] of opts.slotted()) if (opts.funcs.get(name)?.body) visit(reach, name, null);
  // A function that may recurse is two wasm functions: its body, which takes and returns the
  // fuel and depth (meteredSig), and after all bodies a wrapper with the C signature, which is
  // what exports, the table and functions that do not recurse call.
  const recursive = findRecursive(order, opts);
  const meteredIndex = new Map<string, number>();
  let wrapperIndex = imports.length + order.length;
  for (let i = 0; i < order.length; i++) {
    const name = order[i]!.name;
    if (!recursive.has(name)) funcIndex.set(name, imports.length + i);
    else {
      meteredIndex.set(name, imports.length + i);
      funcIndex.set(name, wrapperIndex++);
    }
  }

  const ctx: ModuleContext = {
    opts,
    types,
    importIndex,
    funcIndex,
    meteredIndex,
    imports,
    bridge,
    recursive,
    loops: new LoopNest(),
  };
  const functions: ModuleSpec["functions"] = [];
  for (const f of order) {
    const metered = recursive.has(f.name);
    functions.push({
      sig: metered ? meteredSig(compiledType(f)) : userSig(compiledType(f)),
      body: new FunctionGenerator(ctx, f).generate(),
      exportName: metered ? undefined : exportNameOf(f, opts),
    });
  }
  for (const f of order)
    if (recursive.has(f.name))
      functions.push({
        sig: userSig(compiledType(f)),
        body: meteredWrapper(f, meteredIndex.get(f.name)!, opts),
        exportName: exportNameOf(f, opts),
      });

  const slots = opts.slotted();
  let tableSize = 0;
  for (const [, s] of slots) tableSize = Math.max(tableSize, s + 1);
  const table: (number | null)[] = new Array(tableSize).fill(null);
  for (const [name, s] of slots) {
    const idx = funcIndex.get(name);
    if (idx !== undefined) table[s] = idx;
  }
  // Recursion goes optimized too: Liftoff frames are several times larger, and a deep
  // recursion would exhaust the host's stack long before maxCallDepth.
  const longRunning = ctx.recursive.size > 0 || ctx.loops.runsLong;
  const encoded = encodeModule(
    {
      imports:
        imports.length === 0
          ? NO_IMPORTS
          : imports.map(
              (i) => ({ module: i.kind, name: i.name, sig: i.sig }) satisfies ImportedFunc,
            ),
      importedTable: bridgeTableImport(bridge),
      memory: {
        module: "env",
        name: "memory",
        minPages: opts.memoryPages.min,
        maxPages: opts.memoryPages.max,
      },
      functions,
      globals: MODULE_GLOBALS,
      table,
      lazyHints: opts.lazyHints === true && !longRunning,
    },
    types,
  );
  for (const f of functions) f.body.release();
  const exports = new Map<string, Type>();
  for (const r of opts.roots) exports.set(r, opts.funcs.get(r)!.ty);
  const positions: CompiledModule["positions"] = [];
  for (let i = 0; i < functions.length; i++) {
    const body = functions[i]!.body;
    positions.push({
      codeStart: encoded.codeStarts[i]!,
      entries: body.positions,
      traps: body.trapCodes,
    });
  }
  return {
    bytes: encoded.bytes,
    positions,
    imports,
    hostCalls,
    exports,
    longRunning,
  };
}

/** The name a root function is exported under (the others are not exported). */
function exportNameOf(f: Func, opts: CodegenOptions): string | undefined {
  return opts.roots.includes(f.name) ? f.name : undefined;
}

/** What the reachability walk collects: module functions in order, and the host functions and
 * intrinsics they call. (A walk with explicit state rather than a closure per block: V8 drops a
 * closure's optimized code with the closure, at the next full collection.) */
interface Reach {
  opts: CodegenOptions;
  order: Func[];
  seen: Set<string>;
  hostCalls: string[];
  imports: CompiledModule["imports"];
  importIndex: Map<string, number>;
}

/** Adds `name` and what it calls: user/C-library functions become module functions, host
 * functions bridge calls, intrinsics imports; anything else is an error at the call `at`. */
function visit(r: Reach, name: string, at: { line: number; col: number } | null): void {
  if (r.seen.has(name)) return;
  const { opts } = r;
  const f = opts.funcs.get(name);
  if (f && f.body) {
    r.seen.add(name);
    r.order.push(f);
    for (const [ref, pos] of f.refs) visit(r, ref, pos);
    return;
  }
  if (opts.hostFunctions.has(name)) {
    r.seen.add(name);
    if (!INLINE_FUNCTIONS.has(name)) r.hostCalls.push(name);
    return;
  }
  if (opts.intrinsics.has(name)) {
    r.seen.add(name);
    r.importIndex.set(name, r.imports.length);
    r.imports.push({ kind: "intrinsic", name, sig: hostSig(opts.intrinsics.get(name)!) });
    return;
  }
  const line = at?.line ?? 0;
  const col = at?.col ?? 0;
  if (f)
    throw new CompileError("type", `function '${name}' is declared but never defined`, line, col);
  throw new CompileError("type", `unknown function '${name}'`, line, col);
}

/** Functions that may be re-entered before they return: on a direct call cycle, or reachable
 * through a function pointer, or making indirect calls themselves. */
function findRecursive(order: Func[], opts: CodegenOptions): Set<string> {
  const byName = new Map<string, Func>();
  for (const f of order) byName.set(f.name, f);
  const slotted = opts.slotted();
  const out = new Set<string>();
  for (const f of order) {
    if (f.indirect || slotted.has(f.name)) {
      out.add(f.name);
      continue;
    }
    const seen = new Set<string>();
    const stack = [...f.refs.keys()];
    while (stack.length > 0) {
      const n = stack.pop()!;
      if (n === f.name) {
        out.add(f.name);
        break;
      }
      if (seen.has(n)) continue;
      seen.add(n);
      const g = byName.get(n);
      if (g) {
        if (g.indirect) {
          out.add(f.name);
          break;
        }
        stack.push(...g.refs.keys());
      }
    }
  }
  return out;
}

export type { Var };
