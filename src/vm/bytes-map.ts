// A map keyed by byte content (module bytes, string literals), least recently used first: a
// 32-bit hash of the bytes finds a bucket, and the bytes are compared on a hit. For every
// never-seen block the VM looks up its module bytes and its string literals; a string key
// meant copying the bytes into a string and hashing it again in the Map (about 4 µs for a
// 30-line block's module, several µs for its two format strings).

interface Entry<V> {
  bytes: Uint8Array;
  tag: number;
  value: V;
}

export class BytesMap<V> {
  private readonly byHash = new Map<number, Entry<V>[]>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** The value stored for exactly these bytes and tag (a small number that is part of the
   * key, e.g. an alignment); it becomes the most recently used. */
  get(bytes: Uint8Array, tag = 0, hash = hashBytes(bytes, tag)): V | undefined {
    const bucket = this.byHash.get(hash);
    if (!bucket) return undefined;
    for (const entry of bucket)
      if (entry.tag === tag && sameBytes(entry.bytes, bytes)) {
        this.byHash.delete(hash);
        this.byHash.set(hash, bucket);
        return entry.value;
      }
    return undefined;
  }

  /** Stores a value under a copy of the bytes (callers may reuse their buffer). */
  set(bytes: Uint8Array, value: V, tag = 0, hash = hashBytes(bytes, tag)): void {
    const entry = { bytes: copyOf(bytes), tag, value };
    const bucket = this.byHash.get(hash);
    if (bucket) bucket.push(entry);
    else this.byHash.set(hash, [entry]);
    this.count++;
  }

  /** Forgets the least recently used bytes (with any that share their hash). */
  deleteOldest(): void {
    const oldest = this.byHash.entries().next();
    if (oldest.done) return;
    const [hash, bucket] = oldest.value;
    this.byHash.delete(hash);
    this.count -= bucket.length;
  }

  clear(): void {
    this.byHash.clear();
    this.count = 0;
  }
}

/** FNV-1a over the tag and the bytes, 32 bits. */
export function hashBytes(bytes: Uint8Array, tag = 0): number {
  let h = Math.imul(0x811c9dc5 ^ tag, 0x01000193);
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return h >>> 0;
}

/** A copy in Node's shared pool for small buffers: a typed array over 64 bytes of its own
 * gets a separately allocated backing store, which cost about 3 µs per never-seen module. */
function copyOf(bytes: Uint8Array): Uint8Array {
  const copy = Buffer.allocUnsafe(bytes.length);
  copy.set(bytes);
  return copy;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
