// Spare objects by key (usually a size), for objects that cost more to make than to reuse:
// WebAssembly memories (external memory that only a full GC gives back) and logit states (a
// WebAssembly instance of the SIMD kernels each). One pool per kind; the caller resets what it
// takes.
export class Spares<K, T> {
  private readonly byKey = new Map<K, T[]>();

  /** @param perKey the most spares kept for one key (more are left to the GC). */
  constructor(private readonly perKey = Infinity) {}

  /** A spare for `key`, no longer in the pool; undefined when there is none. */
  take(key: K): T | undefined {
    return this.byKey.get(key)?.pop();
  }

  /** Keeps `item` for the next take(key), unless that key already has `perKey` spares. */
  give(key: K, item: T): void {
    let spares = this.byKey.get(key);
    if (!spares) this.byKey.set(key, (spares = []));
    if (spares.length < this.perKey) spares.push(item);
  }
}
