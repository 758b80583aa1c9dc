// One VM's linear memory: layout (null guard with the allocator's state, shadow stack, heap),
// growth up to the memory limit, permanent storage for globals and string literals, and
// typed reads and writes for the host library and intrinsics. malloc/free are C code.
import { HEAP_IN_USE, HEAP_STATE_ADDR, HEAP_TOP } from "../c/library.js";
import { PAGE, Wasm, type WasmMemory } from "./wasm-api.js";
import { Spares } from "../spares.js";

/** Addresses below this are never handed out, so NULL and small offsets from it stay unused. */
export const NULL_GUARD = 1024;

const roundUp = (n: number, a: number): number => Math.ceil(n / a) * a;

/**
 * Memories of released VmMemories (their sessions ended), by "pages:maximum", for the next
 * memory of that size. V8 counts each new WebAssembly.Memory as external memory that only a full
 * mark-compact gives back: a server making a session per request (one region each) ran a
 * mark-compact every ~20 requests, on its decode thread and on every GC helper thread
 * (docs/server.md). Only memories that never grew are kept (the next one expects `initial`
 * pages), and only small ones (zeroing is then cheaper than a new memory's page faults).
 */
const spareMemories = new Spares<string, WasmMemory>(16);
const SPARE_MAX_BYTES = 1 << 20;

/** A zeroed memory of `initial` pages (growable to `maximum`): a spare one, or a new one. */
function takeMemory(key: string, initial: number, maximum: number): WasmMemory {
  const wasm = spareMemories.take(key);
  if (!wasm) return new Wasm.Memory({ initial, maximum });
  new Uint8Array(wasm.buffer).fill(0);
  return wasm;
}

export class VmMemory {
  readonly wasm: WasmMemory;
  readonly stackLow = NULL_GUARD;
  readonly stackTop: number;
  readonly heapStart: number;
  private staticBytes = 0;
  private u8cache: Uint8Array;
  private dvcache: DataView;
  private readonly spareKey: string;
  private readonly initialBytes: number;
  private released = false;

  constructor(
    readonly limitBytes: number,
    stackBytes: number,
  ) {
    this.stackTop = roundUp(NULL_GUARD + stackBytes, 16);
    this.heapStart = this.stackTop;
    const maxPages = Math.floor(limitBytes / PAGE);
    const initial = Math.min(maxPages, Math.ceil((this.heapStart + PAGE) / PAGE));
    this.spareKey = `${initial}:${maxPages}`;
    this.initialBytes = initial * PAGE;
    this.wasm = takeMemory(this.spareKey, initial, maxPages);
    this.u8cache = new Uint8Array(this.wasm.buffer);
    this.dvcache = new DataView(this.wasm.buffer);
    this.setState(HEAP_TOP, this.heapStart);
  }

  private state(i: number): number {
    return this.dv.getUint32(HEAP_STATE_ADDR + 4 * i, true);
  }
  private setState(i: number, v: number): void {
    this.dv.setUint32(HEAP_STATE_ADDR + 4 * i, v, true);
  }

  get pages(): { min: number; max: number } {
    return { min: 1, max: Math.floor(this.limitBytes / PAGE) };
  }
  // Growing the memory detaches its old buffer, and a view of a detached buffer has length 0:
  // checking that costs a few ns, where reading `wasm.buffer` costs about 80 (an API call), on
  // every host access to VM memory.
  get u8(): Uint8Array {
    if (this.u8cache.length === 0) this.refresh();
    return this.u8cache;
  }
  get dv(): DataView {
    if (this.u8cache.length === 0) this.refresh();
    return this.dvcache;
  }
  private refresh(): void {
    // Its buffer went to another owner (see release).
    if (this.released) throw new RangeError("the VM's memory was released");
    this.u8cache = new Uint8Array(this.wasm.buffer);
    this.dvcache = new DataView(this.wasm.buffer);
  }
  /**
   * Hands the WebAssembly memory to the next VmMemory of the same size, which zeroes it. Call it
   * only when nothing will run in this memory again (its session is done, see
   * VmSession.dispose): this object's own accesses throw from now on.
   */
  release(): void {
    if (this.released) return;
    this.released = true;
    // Empty views make the accessors refresh, which throws.
    this.u8cache = new Uint8Array(0);
    if (this.initialBytes > SPARE_MAX_BYTES || this.wasm.buffer.byteLength !== this.initialBytes)
      return;
    spareMemories.give(this.spareKey, this.wasm);
  }

  /** Bytes in use: live malloc blocks plus globals and string literals. */
  get bytesInUse(): number {
    return this.state(HEAP_IN_USE) + this.staticBytes;
  }
  /** Highest heap address ever used. */
  get heapHighWater(): number {
    return this.state(HEAP_TOP);
  }

  private ensure(end: number): boolean {
    const have = this.wasm.buffer.byteLength;
    if (end <= have) return true;
    if (end > this.limitBytes) return false;
    const need = Math.ceil((end - have) / PAGE);
    // Grow by a quarter at least (as the C allocator does): growing can copy the whole memory.
    const step = Math.max(need, Math.floor(have / PAGE / 4), 16);
    for (const pages of step > need ? [step, need] : [need]) {
      try {
        this.wasm.grow(pages);
        this.refresh();
        return true;
      } catch {
        /* try the exact amount */
      }
    }
    return false;
  }

  /** Permanent storage for globals and string literals, carved from the top of the heap (the
   * C allocator shares the same top pointer); 0 when memory is exhausted. */
  allocStatic(n: number, align = 8): number {
    if (!(n >= 0) || n > this.limitBytes) return 0;
    // The state lives in program-writable memory; never place data below the heap.
    const top = Math.max(this.state(HEAP_TOP), this.heapStart);
    const p = roundUp(top + 8, Math.max(align, 8));
    const end = roundUp(p + Math.max(n, 1), 8);
    if (end > this.limitBytes || !this.ensure(end)) return 0;
    // A header with the low bit set: free() on a global is ignored.
    this.dv.setUint32(p - 8, 1, true);
    this.setState(HEAP_TOP, end);
    this.staticBytes += end - top;
    return p;
  }

  /** Reads a NUL-terminated string (bytes decoded as UTF-8), at most `max` bytes. */
  readCString(p: number, max = 1 << 20): string {
    return Buffer.from(this.readCBytes(p, max)).toString("utf8");
  }
  readCBytes(p: number, max = 1 << 20): Uint8Array {
    const u8 = this.u8;
    if (p < 0 || p >= u8.length) throw new RangeError("memory access out of bounds");
    let end = p;
    const limit = Math.min(u8.length, p + max);
    while (end < limit && u8[end] !== 0) end++;
    return u8.subarray(p, end);
  }
  writeBytes(p: number, bytes: Uint8Array): void {
    const u8 = this.u8;
    if (p < 0 || p + bytes.length > u8.length) throw new RangeError("memory access out of bounds");
    u8.set(bytes, p);
  }
}

export { Wasm };
