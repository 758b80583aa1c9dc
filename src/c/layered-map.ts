// A map layered over another: reads fall through to the parent, writes and deletions stay in
// the layer until it is committed into its parent. Each C block parses into a layer over its
// session's symbols (which sit over the C library's, shared by every session), so starting a
// block costs nothing however many symbols are visible, and a block that fails to compile is
// dropped without touching the session.

/** Marks a key deleted in this layer while the parent still has it. */
const DELETED: unique symbol = Symbol("deleted");

export class LayeredMap<K, V> implements ReadonlyMap<K, V> {
  private readonly own = new Map<K, V | typeof DELETED>();

  constructor(private readonly parent: LayeredMap<K, V> | null = null) {}

  get(key: K): V | undefined {
    // A loop rather than recursion: every identifier the parser reads looks through 3–4 layers.
    let layer: LayeredMap<K, V> | null = this;
    do {
      const v: V | typeof DELETED | undefined = layer.own.get(key);
      if (v !== undefined) return v === DELETED ? undefined : v;
      layer = layer.parent;
    } while (layer);
    return undefined;
  }
  /** Whether this layer itself holds any entry or deletion (its parent aside). */
  hasOwnEntries(): boolean {
    return this.own.size > 0;
  }
  has(key: K): boolean {
    return this.get(key) !== undefined;
  }
  set(key: K, value: V): this {
    this.own.set(key, value);
    return this;
  }
  delete(key: K): boolean {
    const had = this.has(key);
    if (this.parent?.has(key)) this.own.set(key, DELETED);
    else this.own.delete(key);
    return had;
  }
  /** Moves this layer's changes into its parent (the layer is then empty). */
  commit(): void {
    if (!this.parent) return;
    for (const [k, v] of this.own) {
      if (v === DELETED) this.parent.delete(k);
      else this.parent.set(k, v);
    }
    this.own.clear();
  }

  /** Every visible entry: the parent's first (in their order), then this layer's new keys. */
  *entries(): MapIterator<[K, V]> {
    const seen = new Set<K>();
    for (const [k] of this.own) seen.add(k);
    if (this.parent)
      for (const [k, v] of this.parent.entries()) {
        if (!seen.has(k)) yield [k, v];
        else {
          const mine = this.own.get(k)!;
          if (mine !== DELETED) yield [k, mine];
        }
      }
    const inParent = this.parent ? (k: K): boolean => this.parent!.has(k) : () => false;
    for (const [k, v] of this.own) if (v !== DELETED && !inParent(k)) yield [k, v];
  }
  *keys(): MapIterator<K> {
    for (const [k] of this.entries()) yield k;
  }
  *values(): MapIterator<V> {
    for (const [, v] of this.entries()) yield v;
  }
  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entries();
  }
  get size(): number {
    let n = 0;
    for (const _ of this.entries()) n++;
    return n;
  }
  forEach(fn: (value: V, key: K, map: ReadonlyMap<K, V>) => void): void {
    for (const [k, v] of this.entries()) fn(v, k, this);
  }
}
