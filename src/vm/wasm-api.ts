// The slice of the WebAssembly JS API the VM uses, typed here because the project compiles
// without the DOM library (where TypeScript keeps these declarations).

export interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
export interface WasmGlobal {
  value: number;
}
export interface WasmTable {
  get(index: number): ((...args: unknown[]) => unknown) | null;
}
export interface WasmInstance {
  readonly exports: Record<string, unknown>;
}
export type WasmModule = object;

interface WasmNamespace {
  Memory: new (d: { initial: number; maximum: number }) => WasmMemory;
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (
    module: WasmModule,
    imports: Record<string, Record<string, unknown>>,
  ) => WasmInstance;
  RuntimeError: new (...args: unknown[]) => Error;
  CompileError: new (...args: unknown[]) => Error;
  LinkError: new (...args: unknown[]) => Error;
}

export const Wasm = (globalThis as unknown as { WebAssembly: WasmNamespace }).WebAssembly;

export const PAGE = 65536;
