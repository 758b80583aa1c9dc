// The llama.cpp eval callback (cb_eval): records activations and applies steering edits while a
// synchronous llama_decode runs, and maps KV cells to positions. It never throws into C.
import koffi from "koffi";
import type { LlamaApi } from "./library.js";
import {
  GGML_OP_ADD,
  GGML_OP_NONE,
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
const NE = BigInt(OFF.ne);
const SRC1 = BigInt(OFF.src + 8);
// Word indices into a view of one ggml_tensor struct (32-bit words; 64-bit ones for pointers).
const W_TYPE = OFF.type / 4;
const W_NE = OFF.ne / 4;
const W_OP = OFF.op / 4;
const W_NAME = OFF.name / 4;
const Q_SRC0 = OFF.src / 8;
const Q_SRC1 = OFF.src / 8 + 1;
const Q_DATA = OFF.data / 8;
/** ggml_tensor.name is 64 bytes: all of it is compared to tell a cached node from a new one. */
const NAME_WORDS = 16;

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
  /** Keys after RoPE (the ROPE node `Kcur-L`). */
  Key,
  /** Keys before RoPE: the 3-D `Kcur-L` reshape, or `Kcur_normed-L` in models with a K norm. */
  KeyPreRope,
  Value,
  FinalNorm,
  CellStore,
}

interface Classified {
  kind: Kind;
  layer: number;
}

/**
 * A graph node seen before, by address: llama.cpp reuses its graph from decode to decode, so
 * the callback (which runs for every node) finds most nodes here and reads their fields
 * through a view instead of decoding the name through koffi each time.
 */
interface NodeInfo extends Classified {
  words: Int32Array;
  quads: BigUint64Array;
  op: number;
  nameWords: Int32Array;
  name: string;
}

/** A copy of one graph node's F32 data, shape as ggml's ne[] (innermost first). */
export interface CapturedTensor {
  ne: number[];
  data: Float32Array;
}

const NONE: Classified = { kind: Kind.None, layer: -1 };

interface RowWriter {
  write(pos: number, src: Float32Array, off: number): void;
}

function sameName(n: NodeInfo): boolean {
  for (let i = 0; i < NAME_WORDS; i++) if (n.words[W_NAME + i] !== n.nameWords[i]) return false;
  return true;
}

function classify(name: string, op: number): Classified {
  const dash = name.lastIndexOf("-");
  if (dash > 0) {
    const layer = Number(name.slice(dash + 1));
    if (Number.isInteger(layer) && layer >= 0) {
      switch (name.slice(0, dash)) {
        case "l_out":
          return { kind: Kind.Hidden, layer };
        case "kq_soft_max":
          return { kind: Kind.Attention, layer };
        // Kcur-L names the projection, its 3-D reshape and the RoPE node alike.
        case "Kcur":
          if (op === GGML_OP_ROPE) return { kind: Kind.Key, layer };
          return op === GGML_OP_RESHAPE ? { kind: Kind.KeyPreRope, layer } : NONE;
        case "Kcur_normed":
          return { kind: Kind.KeyPreRope, layer };
        case "Vcur":
          return op === GGML_OP_RESHAPE ? { kind: Kind.Value, layer } : NONE;
      }
    }
  }
  if (name === "result_norm") return { kind: Kind.FinalNorm, layer: -1 };
  // The K-cache store of layer 0: its index input says which KV cell each batch row went to.
  if (name === "cache_k_l0 (view)" && op === GGML_OP_SET_ROWS)
    return { kind: Kind.CellStore, layer: 0 };
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
  private readonly nodes = new Map<bigint, NodeInfo>();
  /**
   * Per layer: whether the keys before RoPE can be read from the RoPE node's input when it is
   * observed (true once seen not to be computed in place) instead of splitting the graph at
   * the reshape before it.
   */
  private readonly preRopeAtRope: (boolean | undefined)[] = [];
  private scratch = new Float32Array(4096);
  private indexScratch = new BigInt64Array(512);
  private index32Scratch = new Int32Array(512);
  /** The KV cell → (sequence, position) map; -1 marks a free or unknown cell. */
  cellSeq = new Int32Array(0).fill(-1);
  cellPos = new Int32Array(0);
  /** Node names to copy out during the next decode (tests, exploration), and what was copied. */
  captureNames = new Set<string>();
  readonly captures = new Map<string, CapturedTensor>();
  /** Whether to look for llama.cpp's control-vector tensors during the next decode. */
  private findVectorTensors = false;
  /** The direction tensor added to `l_out-L`, by layer, as found during the last decode. */
  readonly vectorTensors = new Map<number, bigint>();
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

  /**
   * Called right before llama_decode with the rows of this batch, the edits to apply, and
   * whether to report llama.cpp's control-vector tensors (vectorTensors).
   */
  begin(batch: BatchLayout, steering: PendingSteer[], findVectorTensors = false): void {
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
    this.findVectorTensors = findVectorTensors;
    this.vectorTensors.clear();
    const f = this.flags;
    this.anyWanted =
      f.hidden ||
      f.attention ||
      f.kv ||
      f.finalNorm ||
      steering.length > 0 ||
      findVectorTensors ||
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

  /** The node at `t`, from the cache when the same node (op and name) is still there. */
  private node(t: bigint): NodeInfo {
    const known = this.nodes.get(t);
    if (known && known.words[W_OP] === known.op && sameName(known)) return known;
    const buffer = known ? known.words.buffer : koffi.view(t, ggmlTensorLayout.size);
    const words = new Int32Array(buffer);
    const name = koffi.decode.string(t + BigInt(OFF.name));
    const op = words[W_OP]!;
    if (this.nodes.size > 65536) this.nodes.clear();
    const info: NodeInfo = {
      ...classify(name, op),
      words,
      quads: new BigUint64Array(buffer),
      op,
      nameWords: words.slice(W_NAME, W_NAME + NAME_WORDS),
      name,
    };
    this.nodes.set(t, info);
    return info;
  }

  private ask(t: bigint): boolean {
    const c = this.node(t);
    if (c.kind === Kind.CellStore) {
      if (!this.cellsReadableWhenAsked) return true;
      this.cellsFound(t);
    }
    if (this.findVectorTensors && c.kind === Kind.Hidden && c.op === GGML_OP_ADD)
      this.noteVectorTensor(c);
    if (this.captureNames.size > 0 && this.captureNames.has(c.name)) return true;
    return this.wants(c);
  }

  /** llama.cpp's control vector is `l_out-L = ggml_add(ffn_out, direction)`: a 1-D F32 leaf. */
  private noteVectorTensor(c: NodeInfo): void {
    const src1 = c.quads[Q_SRC1]!;
    if (src1 === 0n) return;
    const w = new Int32Array(koffi.view(src1, ggmlTensorLayout.size));
    if (
      w[W_TYPE] === GGML_TYPE_F32 &&
      w[W_OP] === GGML_OP_NONE &&
      w[W_NE] === this.shape.nEmbd &&
      w[W_NE + 2] === 1 &&
      w[W_NE + 4] === 1 &&
      w[W_NE + 6] === 1
    )
      this.vectorTensors.set(c.layer, src1);
  }

  /** Whether the current flags and edits need this node (cell stores are handled apart). */
  private wants(c: Classified): boolean {
    const f = this.flags;
    switch (c.kind) {
      case Kind.Hidden:
        return f.hidden || this.steerByLayer.has(c.layer);
      case Kind.Attention:
        return f.attention;
      case Kind.Key:
      case Kind.Value:
        return f.kv;
      case Kind.KeyPreRope:
        return f.kv && this.preRopeAtRope[c.layer] !== true;
      case Kind.FinalNorm:
        return f.finalNorm;
      default:
        return false;
    }
  }

  private observe(t: bigint): boolean {
    const c = this.node(t);
    const batch = this.batch;
    if (!batch) return true;
    if (c.kind === Kind.CellStore && !this.cellsReadableWhenAsked) {
      this.cellsFound(t);
      return true;
    }
    const tensor = this.readTensor(t, c.words);
    if (!tensor) return true;
    const captured = this.captureNames.size > 0 && this.captureNames.has(c.name);
    if (this.wants(c)) this.handle(c, tensor, batch, t);
    // Repeated names (Qcur-N: matmul, reshape, RoPE) keep the last occurrence; a captured
    // l_out-N shows the data after steering.
    if (captured)
      this.captures.set(c.name, { ne: tensor.ne, data: tensor.data.slice(0, tensor.count) });
    return true;
  }

  /** The F32 data of a contiguous tensor (in the shared scratch buffer), or undefined. */
  private readTensor(
    t: bigint,
    words: Int32Array,
  ): { data: Float32Array; ne: number[]; count: number } | undefined {
    if (words[W_TYPE] !== GGML_TYPE_F32 || !this.api.ggml_is_contiguous(t)) return undefined;
    // ne[] are int64; the high words of real sizes are zero.
    const ne = [words[W_NE]!, words[W_NE + 2]!, words[W_NE + 4]!, words[W_NE + 6]!];
    const count = ne[0]! * ne[1]! * ne[2]! * ne[3]!;
    return { data: this.read(t, count), ne, count };
  }

  private handle(
    c: NodeInfo,
    { data, ne: [ne0, ne1, ne2], count }: { data: Float32Array; ne: number[]; count: number },
    batch: BatchLayout,
    t: bigint,
  ): void {
    switch (c.kind) {
      case Kind.Hidden: {
        const rows = this.rowMap(batch, ne1!);
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
        const rows = this.rowMap(batch, ne1!);
        if (rows && ne0 === this.shape.nEmbd)
          this.recordRows(data, rows, batch, ne0, (r) => r.finalNorm);
        return;
      }
      case Kind.Key:
        this.recordKeysOrValues(data, ne0!, ne1!, ne2!, batch, (r) => r.keys[c.layer]);
        this.keysBeforeRope(c, batch);
        return;
      case Kind.KeyPreRope:
        this.recordKeysOrValues(data, ne0!, ne1!, ne2!, batch, (r) => r.keysPreRope[c.layer]);
        return;
      case Kind.Value:
        this.recordKeysOrValues(data, ne0!, ne1!, ne2!, batch, (r) => r.values[c.layer]);
        return;
      case Kind.Attention:
        // [nKv cells, nTokens, nHead]
        if (ne1 === batch.n && ne2 === this.shape.nHead && this.cellsSeen)
          this.recordAttention(data, batch, c.layer, ne0!);
        return;
    }
    return;
  }

  /** K or V rows, [headDim, nHeadKv, nTokens]. */
  private recordKeysOrValues(
    data: Float32Array,
    ne0: number,
    ne1: number,
    ne2: number,
    batch: BatchLayout,
    table: (r: SequenceRecordings) => RowWriter | undefined,
  ): void {
    const width = ne0 * ne1;
    const rows = this.rowMap(batch, ne2);
    if (rows && width === this.shape.nEmbdKv) this.recordRows(data, rows, batch, width, table);
  }

  /**
   * At the RoPE node, its input still holds the keys before RoPE unless RoPE was computed in
   * place; then they are read here and the split before RoPE is dropped for this layer. When
   * it is in place, later decodes split at the input instead.
   */
  private keysBeforeRope(rope: NodeInfo, batch: BatchLayout): void {
    const src0 = rope.quads[Q_SRC0]!;
    if (src0 === 0n) return;
    const input = this.node(src0);
    const inPlace = input.quads[Q_DATA] === rope.quads[Q_DATA];
    this.preRopeAtRope[rope.layer] = !inPlace;
    if (inPlace) return;
    const tensor = this.readTensor(src0, input.words);
    if (!tensor) return;
    const [ne0, ne1, ne2] = tensor.ne;
    this.recordKeysOrValues(tensor.data, ne0!, ne1!, ne2!, batch, (r) => r.keysPreRope[rope.layer]);
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
    table: (r: SequenceRecordings) => RowWriter | undefined,
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
