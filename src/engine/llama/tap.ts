// The llama.cpp eval callback (cb_eval): records activations and applies steering edits while a
// synchronous llama_decode runs, and maps KV cells to positions. It never throws into C.
import koffi from "koffi";
import type { LlamaApi } from "./library.js";
import {
  GGML_OP_RESHAPE,
  GGML_OP_ROPE,
  GGML_OP_SET_ROWS,
  GGML_TYPE_F32,
  GGML_TYPE_I32,
  GGML_TYPE_I64,
  ggmlTensorLayout,
} from "./abi.js";
import type { ModelShape, SequenceRecordings } from "./recordings.js";
import type { ObserveOptions, SteerEdit } from "../types.js";

const OFF = ggmlTensorLayout.offsets;
const NAME = BigInt(OFF.name);
const OP = BigInt(OFF.op);
const NE = BigInt(OFF.ne);
const SRC1 = BigInt(OFF.src + 8);

/** One llama_decode call: which sequence and position each batch row is, and which rows output. */
export interface BatchLayout {
  n: number;
  seqs: Int32Array;
  pos: Int32Array;
  /** Batch indices of the rows that produce outputs, in batch order. */
  outputs: number[];
}

export interface PendingSteer {
  layer: number;
  edit: SteerEdit;
  seq: number | undefined;
  persistent: boolean;
}

const enum Kind {
  None,
  Hidden,
  Attention,
  Key,
  Value,
  FinalNorm,
  CellStore,
}

interface Classified {
  kind: Kind;
  layer: number;
  name?: string;
}

/** A copy of one graph node's F32 data, shape as ggml's ne[] (innermost first). */
export interface CapturedTensor {
  ne: number[];
  data: Float32Array;
}

const NONE: Classified = { kind: Kind.None, layer: -1 };

function classify(name: string): Classified {
  const dash = name.lastIndexOf("-");
  if (dash > 0) {
    const layer = Number(name.slice(dash + 1));
    if (Number.isInteger(layer) && layer >= 0) {
      switch (name.slice(0, dash)) {
        case "l_out":
          return { kind: Kind.Hidden, layer };
        case "kq_soft_max":
          return { kind: Kind.Attention, layer };
        case "Kcur":
          return { kind: Kind.Key, layer };
        case "Vcur":
          return { kind: Kind.Value, layer };
      }
    }
  }
  if (name === "result_norm") return { kind: Kind.FinalNorm, layer: -1 };
  // The K-cache store of layer 0: its index input says which KV cell each batch row went to.
  if (name === "cache_k_l0 (view)") return { kind: Kind.CellStore, layer: 0 };
  return NONE;
}

export class GraphTap {
  readonly flags: Required<ObserveOptions> = {
    hidden: false,
    attention: false,
    kv: false,
    finalNorm: false,
  };
  /** Edits applied during the current decode, by layer. */
  private steerByLayer = new Map<number, PendingSteer[]>();
  private batch: BatchLayout | undefined;
  private scanning = false;
  private cellsSeen = false;
  private anyWanted = false;
  private cellsBySeq: Map<number, { cells: number[]; pos: number[] }> | undefined;
  private cellsBySeqWidth = 0;
  private readonly names = new Map<string, Classified>();
  private scratch = new Float32Array(4096);
  private indexScratch = new BigInt64Array(512);
  private index32Scratch = new Int32Array(512);
  /** The KV cell → (sequence, position) map; -1 marks a free or unknown cell. */
  cellSeq = new Int32Array(0).fill(-1);
  cellPos = new Int32Array(0);
  /** Node names to copy out during the next decode (tests, exploration), and what was copied. */
  captureNames = new Set<string>();
  readonly captures = new Map<string, CapturedTensor>();
  /** The first exception caught inside the callback during the current decode. */
  error: unknown = undefined;
  readonly pointer: bigint;

  constructor(
    private readonly api: LlamaApi,
    private readonly shape: ModelShape,
    private readonly recordingsOf: (seq: number) => SequenceRecordings,
    /**
     * On the CPU backend the cell indices are host memory set before the graph runs, so they
     * can be read in the ask phase without splitting the graph; a GPU scheduler may hold a
     * device copy that is only filled when its split runs, so there they are read in the
     * observe phase.
     */
    private readonly cellsReadableWhenAsked: boolean,
  ) {
    this.pointer = koffi.register(
      (t: bigint, ask: boolean) => this.safeCallback(t, ask),
      koffi.pointer(evalCallbackType()),
    );
  }

  /** Called right before llama_decode with the rows of this batch and the edits to apply. */
  begin(batch: BatchLayout, steering: PendingSteer[]): void {
    this.batch = batch;
    this.error = undefined;
    this.cellsSeen = false;
    this.cellsBySeq = undefined;
    this.steerByLayer.clear();
    for (const s of steering) {
      const list = this.steerByLayer.get(s.layer) ?? [];
      list.push(s);
      this.steerByLayer.set(s.layer, list);
    }
    const f = this.flags;
    this.anyWanted =
      f.hidden ||
      f.attention ||
      f.kv ||
      f.finalNorm ||
      steering.length > 0 ||
      this.captureNames.size > 0;
    this.captures.clear();
    this.scanning = true;
  }

  end(): void {
    this.batch = undefined;
    this.scanning = false;
  }

  /** Forgets cells of `seq` at positions >= length (after llama_memory_seq_rm). */
  forgetCells(seq: number, length: number): void {
    const cs = this.cellSeq;
    const cp = this.cellPos;
    for (let c = 0; c < cs.length; c++) if (cs[c] === seq && cp[c]! >= length) cs[c] = -1;
  }

  private safeCallback(t: bigint, ask: boolean): boolean {
    // Fast path: nothing left to look at in this decode.
    if (!this.scanning) return !ask;
    try {
      return ask ? this.ask(t) : this.observe(t);
    } catch (err) {
      this.error ??= err;
      // Returning false in the observe phase would silently stop the graph.
      return !ask;
    }
  }

  private classifyNode(t: bigint): Classified {
    const name = koffi.decode.string(t + NAME);
    let c = this.names.get(name);
    if (!c) {
      c = { ...classify(name), name };
      this.names.set(name, c);
    }
    return c;
  }

  private ask(t: bigint): boolean {
    const c = this.classifyNode(t);
    if (c.kind === Kind.CellStore && koffi.decode.int32(t + OP) === GGML_OP_SET_ROWS) {
      if (!this.cellsReadableWhenAsked) return true;
      this.cellsFound(t);
    }
    if (this.captureNames.size > 0 && this.captureNames.has(c.name!)) return true;
    return this.wants(c, t);
  }

  /** Whether the current flags and edits need this node (cell stores are handled apart). */
  private wants(c: Classified, t: bigint): boolean {
    const f = this.flags;
    switch (c.kind) {
      case Kind.Hidden:
        return f.hidden || this.steerByLayer.has(c.layer);
      case Kind.Attention:
        return f.attention;
      case Kind.Key:
        return f.kv && koffi.decode.int32(t + OP) === GGML_OP_ROPE;
      case Kind.Value:
        return f.kv && koffi.decode.int32(t + OP) === GGML_OP_RESHAPE;
      case Kind.FinalNorm:
        return f.finalNorm;
      default:
        return false;
    }
  }

  private observe(t: bigint): boolean {
    const c = this.classifyNode(t);
    const batch = this.batch;
    if (!batch) return true;
    if (c.kind === Kind.CellStore && !this.cellsReadableWhenAsked) {
      this.cellsFound(t);
      return true;
    }
    if (koffi.decode.int32(t) !== GGML_TYPE_F32 || !this.api.ggml_is_contiguous(t)) return true;
    const ne0 = Number(koffi.decode.int64(t + NE));
    const ne1 = Number(koffi.decode.int64(t + NE + 8n));
    const ne2 = Number(koffi.decode.int64(t + NE + 16n));
    const ne3 = Number(koffi.decode.int64(t + NE + 24n));
    const count = ne0 * ne1 * ne2 * ne3;
    const data = this.read(t, count);
    const captured = this.captureNames.size > 0 && this.captureNames.has(c.name!);
    if (this.wants(c, t)) this.handle(c, data, batch, [ne0, ne1, ne2], t, count);
    // Repeated names (Qcur-N: matmul, reshape, RoPE) keep the last occurrence; a captured
    // l_out-N shows the data after steering.
    if (captured)
      this.captures.set(c.name!, { ne: [ne0, ne1, ne2, ne3], data: data.slice(0, count) });
    return true;
  }

  private handle(
    c: Classified,
    data: Float32Array,
    batch: BatchLayout,
    [ne0, ne1, ne2]: number[],
    t: bigint,
    count: number,
  ): void {
    switch (c.kind) {
      case Kind.Hidden: {
        const rows = this.rowMap(batch, ne1);
        if (!rows || ne0 !== this.shape.nEmbd) return;
        const edits = this.steerByLayer.get(c.layer);
        if (edits) {
          this.applySteering(data, rows, batch, edits);
          this.api.ggml_backend_tensor_set(t, data, 0, count * 4);
        }
        if (this.flags.hidden) this.recordRows(data, rows, batch, ne0, (r) => r.hidden[c.layer]);
        return;
      }
      case Kind.FinalNorm: {
        const rows = this.rowMap(batch, ne1);
        if (rows && ne0 === this.shape.nEmbd)
          this.recordRows(data, rows, batch, ne0, (r) => r.finalNorm);
        return;
      }
      case Kind.Key:
      case Kind.Value: {
        // [headDim, nHeadKv, nTokens]
        const width = ne0 * ne1;
        const rows = this.rowMap(batch, ne2);
        if (!rows || width !== this.shape.nEmbdKv) return;
        const layer = c.layer;
        this.recordRows(data, rows, batch, width, (r) =>
          c.kind === Kind.Key ? r.keys[layer] : r.values[layer],
        );
        return;
      }
      case Kind.Attention:
        // [nKv cells, nTokens, nHead]
        if (ne1 === batch.n && ne2 === this.shape.nHead && this.cellsSeen)
          this.recordAttention(data, batch, c.layer, ne0);
        return;
    }
    return;
  }

  private cellsFound(t: bigint): void {
    if (this.batch) this.recordCells(t, this.batch);
    this.cellsSeen = true;
    // Without anything to record or edit, the rest of the graph needs no attention.
    if (!this.anyWanted) this.scanning = false;
  }

  private read(t: bigint, count: number): Float32Array {
    if (this.scratch.length < count) this.scratch = new Float32Array(count * 2);
    this.api.ggml_backend_tensor_get(t, this.scratch, 0, count * 4);
    return this.scratch;
  }

  /** Batch index of each tensor row: every row, or (last layer) only the output rows. */
  private rowMap(batch: BatchLayout, rows: number): ArrayLike<number> | undefined {
    if (rows === batch.n) return identity(batch.n);
    if (rows === batch.outputs.length) return batch.outputs;
    return undefined;
  }

  private recordRows(
    data: Float32Array,
    rows: ArrayLike<number>,
    batch: BatchLayout,
    width: number,
    table: (
      r: SequenceRecordings,
    ) => { write(pos: number, src: Float32Array, off: number): void } | undefined,
  ): void {
    for (let r = 0; r < rows.length; r++) {
      const i = rows[r]!;
      table(this.recordingsOf(batch.seqs[i]!))?.write(batch.pos[i]!, data, r * width);
    }
  }

  private applySteering(
    data: Float32Array,
    rows: ArrayLike<number>,
    batch: BatchLayout,
    edits: PendingSteer[],
  ): void {
    const width = this.shape.nEmbd;
    for (const s of edits) {
      for (let r = 0; r < rows.length; r++) {
        if (s.seq !== undefined && batch.seqs[rows[r]!] !== s.seq) continue;
        const base = r * width;
        if ("add" in s.edit) {
          const v = s.edit.add;
          for (let d = 0; d < width; d++) data[base + d]! += v[d]!;
        } else {
          const k = s.edit.scale;
          for (let d = 0; d < width; d++) data[base + d]! *= k;
        }
      }
    }
  }

  private recordCells(t: bigint, batch: BatchLayout): void {
    const idx = koffi.decode.uint64(t + SRC1) as bigint | number;
    const idxPtr = BigInt(idx);
    if (idxPtr === 0n) return;
    const type = koffi.decode.int32(idxPtr);
    const n = Number(koffi.decode.int64(idxPtr + NE));
    if (n !== batch.n) return;
    let cells: ArrayLike<number | bigint>;
    if (type === GGML_TYPE_I64) {
      if (this.indexScratch.length < n) this.indexScratch = new BigInt64Array(n);
      this.api.ggml_backend_tensor_get(idxPtr, this.indexScratch, 0, n * 8);
      cells = this.indexScratch;
    } else if (type === GGML_TYPE_I32) {
      if (this.index32Scratch.length < n) this.index32Scratch = new Int32Array(n);
      this.api.ggml_backend_tensor_get(idxPtr, this.index32Scratch, 0, n * 4);
      cells = this.index32Scratch;
    } else return;
    for (let i = 0; i < n; i++) {
      const cell = Number(cells[i]!);
      this.ensureCells(cell + 1);
      this.cellSeq[cell] = batch.seqs[i]!;
      this.cellPos[cell] = batch.pos[i]!;
    }
  }

  private ensureCells(n: number): void {
    if (n <= this.cellSeq.length) return;
    const size = Math.max(n, this.cellSeq.length * 2, 256);
    const seq = new Int32Array(size).fill(-1);
    seq.set(this.cellSeq);
    const pos = new Int32Array(size);
    pos.set(this.cellPos);
    this.cellSeq = seq;
    this.cellPos = pos;
  }

  private recordAttention(
    data: Float32Array,
    batch: BatchLayout,
    layer: number,
    nKv: number,
  ): void {
    const nHead = this.shape.nHead;
    const nTok = batch.n;
    // Cells of each sequence in this batch, gathered once per decode (the map is complete
    // after the layer-0 cache store, before any attention runs).
    let cellsBySeq = this.cellsBySeq;
    if (!cellsBySeq || this.cellsBySeqWidth !== nKv) {
      cellsBySeq = new Map();
      const limit = Math.min(nKv, this.cellSeq.length);
      for (let i = 0; i < nTok; i++) {
        const s = batch.seqs[i]!;
        if (cellsBySeq.has(s)) continue;
        const cells: number[] = [];
        const pos: number[] = [];
        for (let c = 0; c < limit; c++)
          if (this.cellSeq[c] === s) {
            cells.push(c);
            pos.push(this.cellPos[c]!);
          }
        cellsBySeq.set(s, { cells, pos });
      }
      this.cellsBySeq = cellsBySeq;
      this.cellsBySeqWidth = nKv;
    }
    for (let r = 0; r < nTok; r++) {
      const s = batch.seqs[r]!;
      const q = batch.pos[r]!;
      const row = this.recordingsOf(s).attention[layer]?.allocate(q);
      if (!row) continue;
      const { cells, pos } = cellsBySeq.get(s)!;
      const width = q + 1;
      for (let h = 0; h < nHead; h++) {
        const base = (h * nTok + r) * nKv;
        const out = h * width;
        for (let k = 0; k < cells.length; k++) {
          const p = pos[k]!;
          if (p <= q) row[out + p] = data[base + cells[k]!]!;
        }
      }
    }
  }
}

let evalProto: ReturnType<typeof koffi.proto> | undefined;
/** koffi type names are process-global, so the prototype is declared once. */
function evalCallbackType(): ReturnType<typeof koffi.proto> {
  evalProto ??= koffi.proto("bool ruffian_eval_cb(void *t, bool ask, void *ud)");
  return evalProto;
}

const identities: Int32Array[] = [];
function identity(n: number): Int32Array {
  let id = identities[n];
  if (!id) {
    id = new Int32Array(n);
    for (let i = 0; i < n; i++) id[i] = i;
    identities[n] = id;
  }
  return id;
}
