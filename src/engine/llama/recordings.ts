// Storage for activations observed during decoding, per sequence and position, so that reads of
// any earlier position are served synchronously later; bounded by a shared byte budget.

export class ObservationBudget {
  used = 0;
  exceeded = false;
  constructor(readonly limit: number) {}

  /** Reserves bytes; false (and exceeded set) when the budget would be overrun. */
  take(bytes: number): boolean {
    if (this.used + bytes > this.limit) {
      this.exceeded = true;
      return false;
    }
    this.used += bytes;
    return true;
  }

  give(bytes: number): void {
    this.used -= bytes;
  }
}

/** Rows of a fixed width indexed by position; grows by doubling as positions are written. */
export class RowTable {
  private data = new Float32Array(0);
  private valid = new Uint8Array(0);

  constructor(
    readonly width: number,
    private readonly budget: ObservationBudget,
  ) {}

  get bytes(): number {
    return this.data.byteLength;
  }

  write(pos: number, source: Float32Array, offset: number): void {
    if (pos >= this.valid.length && !this.grow(pos + 1)) return;
    this.data.set(source.subarray(offset, offset + this.width), pos * this.width);
    this.valid[pos] = 1;
  }

  read(pos: number): Float32Array | undefined {
    if (!(pos >= 0 && pos < this.valid.length) || this.valid[pos] === 0) return undefined;
    return this.data.subarray(pos * this.width, (pos + 1) * this.width);
  }

  truncate(length: number): void {
    if (length < this.valid.length) this.valid.fill(0, Math.max(0, length));
  }

  release(): void {
    this.budget.give(this.data.byteLength);
    this.data = new Float32Array(0);
    this.valid = new Uint8Array(0);
  }

  private grow(minPositions: number): boolean {
    let capacity = Math.max(16, this.valid.length);
    while (capacity < minPositions) capacity *= 2;
    const extraBytes = (capacity - this.valid.length) * this.width * 4;
    if (!this.budget.take(extraBytes)) return false;
    const data = new Float32Array(capacity * this.width);
    data.set(this.data);
    const valid = new Uint8Array(capacity);
    valid.set(this.valid);
    this.data = data;
    this.valid = valid;
    return true;
  }
}

/**
 * Attention of each query position over key positions 0..q, all heads of one layer in one array
 * (head h at h*(q+1)); rows are ragged, so they are kept individually.
 */
export class AttentionTable {
  private rows: (Float32Array | undefined)[] = [];

  constructor(
    readonly nHead: number,
    private readonly budget: ObservationBudget,
  ) {}

  /** A zeroed row for query position q, or undefined when over budget. */
  allocate(q: number): Float32Array | undefined {
    const old = this.rows[q];
    if (old) {
      old.fill(0);
      return old;
    }
    const bytes = this.nHead * (q + 1) * 4;
    if (!this.budget.take(bytes)) return undefined;
    const row = new Float32Array(this.nHead * (q + 1));
    this.rows[q] = row;
    return row;
  }

  read(head: number, q: number): Float32Array | undefined {
    const row = this.rows[q];
    if (!row || head < 0 || head >= this.nHead) return undefined;
    return row.subarray(head * (q + 1), (head + 1) * (q + 1));
  }

  truncate(length: number): void {
    for (let q = Math.max(0, length); q < this.rows.length; q++) {
      const row = this.rows[q];
      if (row) this.budget.give(row.byteLength);
    }
    if (length < this.rows.length) this.rows.length = Math.max(0, length);
  }
}

export interface ModelShape {
  nLayer: number;
  nHead: number;
  nEmbd: number;
  nEmbdKv: number;
}

/** Everything recorded for one sequence. */
export class SequenceRecordings {
  readonly hidden: RowTable[];
  readonly finalNorm: RowTable;
  /** Keys after RoPE (as the KV cache holds them) and before. */
  readonly keys: RowTable[];
  readonly keysPreRope: RowTable[];
  readonly values: RowTable[];
  readonly attention: AttentionTable[];

  constructor(shape: ModelShape, budget: ObservationBudget) {
    const layers = Array.from({ length: shape.nLayer });
    this.hidden = layers.map(() => new RowTable(shape.nEmbd, budget));
    this.finalNorm = new RowTable(shape.nEmbd, budget);
    this.keys = layers.map(() => new RowTable(shape.nEmbdKv, budget));
    this.keysPreRope = layers.map(() => new RowTable(shape.nEmbdKv, budget));
    this.values = layers.map(() => new RowTable(shape.nEmbdKv, budget));
    this.attention = layers.map(() => new AttentionTable(shape.nHead, budget));
  }

  private rowTables(): RowTable[] {
    return [...this.hidden, this.finalNorm, ...this.keys, ...this.keysPreRope, ...this.values];
  }

  truncate(length: number): void {
    for (const t of this.rowTables()) t.truncate(length);
    for (const a of this.attention) a.truncate(length);
  }

  release(): void {
    for (const t of this.rowTables()) t.release();
    for (const a of this.attention) a.truncate(0);
  }
}
