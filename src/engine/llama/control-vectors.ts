// Control vectors of a context: the context-wide one and one per sequence, and, before each
// llama_decode, which part goes through llama.cpp's own vector and which through the graph tap.
//
// llama.cpp's control vector (llama_set_adapter_cvec) costs one ggml_add per layer, but it is
// context-wide and every call makes the scheduler re-plan the graph (sched_need_reserve), which
// costs more than a decode step on a small model. So it is installed once over every layer and
// then left in the graph: between decodes its direction tensors (found by the tap as the second
// operand of `l_out-L`) are overwritten in place with whatever this batch needs, zeros when
// nothing. A batch whose sequences all share one vector gets it there; only batches mixing
// sequences with different vectors need the tap, which splits the graph at each steered layer.
import type { LlamaApi } from "./library.js";
import type { PendingSteer } from "./tap.js";
import { sameDirections } from "../../steer/control-vector.js";

/** Decodes with nothing to add before llama.cpp's vector is taken out of the graph again. */
const IDLE_DECODES_BEFORE_REMOVAL = 64;

/** What the engine asks of llama.cpp for its vector (so tests can count the re-plans). */
export interface NativeVectorCounters {
  /** llama_set_adapter_cvec calls (each re-plans the graph on the next decode). */
  installs: number;
  /** Changes written straight into the installed direction tensors. */
  inPlaceWrites: number;
}

interface SequenceVector {
  layers: ReadonlyMap<number, Float32Array>;
  /** Forced through the tap (tests compare the two paths). */
  tapOnly: boolean;
  /** The vector as tap edits, built once. */
  edits: PendingSteer[];
}

export class ControlVectors {
  /** The context-wide vector in llama.cpp's layout (layer 1 first), or null. */
  private base: Float32Array | null = null;
  private readonly bySeq = new Map<number, SequenceVector>();
  private installed = false;
  /** The direction tensor of each layer (index 0 unused), once the tap has seen them. */
  private readonly tensors: (bigint | undefined)[] = [];
  /** What the direction tensors hold now, and for which (base, shared vector) pair. */
  private written: Float32Array;
  private writtenFor: {
    base: Float32Array | null;
    shared: ReadonlyMap<number, Float32Array> | null;
  } = {
    base: null,
    shared: null,
  };
  private idleDecodes = 0;
  readonly counters: NativeVectorCounters = { installs: 0, inPlaceWrites: 0 };

  constructor(
    private readonly api: LlamaApi,
    private readonly ctx: () => bigint,
    private readonly nEmbd: number,
    private readonly nLayer: number,
  ) {
    this.written = new Float32Array(nEmbd * Math.max(0, nLayer - 1));
  }

  /** Sets the context-wide vector (llama.cpp's layout, layers ilStart..ilEnd); null removes it. */
  setBase(data: Float32Array | null, ilStart: number, ilEnd: number): void {
    if (!data) {
      this.base = null;
      return;
    }
    const base = new Float32Array(this.written.length);
    const from = Math.max(1, ilStart) - 1;
    const to = Math.min(this.nLayer - 1, ilEnd);
    base.set(data.subarray(from * this.nEmbd, to * this.nEmbd), from * this.nEmbd);
    this.base = base;
  }

  /** Sets one sequence's vector (directions already scaled); null removes it. */
  set(seq: number, layers: ReadonlyMap<number, Float32Array> | null, tapOnly: boolean): void {
    if (!layers || layers.size === 0) {
      this.bySeq.delete(seq);
      return;
    }
    // Sequences given equal vectors share one copy, so that a batch of them counts as sharing.
    let copy: ReadonlyMap<number, Float32Array> | undefined;
    for (const other of this.bySeq.values())
      if (other.tapOnly === tapOnly && sameDirections(other.layers, layers)) copy = other.layers;
    copy ??= new Map([...layers].map(([l, v]) => [l, Float32Array.from(v)] as const));
    this.bySeq.set(seq, {
      layers: copy,
      tapOnly,
      edits: [...copy].map(([layer, v]) => ({ layer, edit: { add: v }, seq, persistent: true })),
    });
  }

  of(seq: number): ReadonlyMap<number, Float32Array> | null {
    return this.bySeq.get(seq)?.layers ?? null;
  }

  /** Whether the tap should report the direction tensors during the next decode. */
  get wantsTensors(): boolean {
    return this.installed && this.tensors.length === 0;
  }

  /** Called by the tap with what it found as the added operand of each `l_out-L`. */
  foundTensors(byLayer: ReadonlyMap<number, bigint>): void {
    if (this.tensors.length > 0) return;
    for (let l = 1; l < this.nLayer; l++) if (!byLayer.has(l)) return;
    for (let l = 1; l < this.nLayer; l++) this.tensors[l] = byLayer.get(l)!;
  }

  /**
   * Prepares llama.cpp's vector for a batch with these rows' sequences and returns the edits
   * left for the tap (the vectors of a mixed batch, and any layer 0).
   */
  plan(seqs: Int32Array, n: number): PendingSteer[] {
    let shared: SequenceVector | null | undefined;
    let mixed = false;
    for (let i = 0; i < n; i++) {
      const v = this.bySeq.get(seqs[i]!) ?? null;
      if (shared === undefined) shared = v;
      else if (shared?.layers !== v?.layers) mixed = true;
    }
    // Layer 0 has no tensor in llama.cpp's vector, and a forced tap takes the whole vector.
    const native = !mixed && shared && !shared.tapOnly ? shared : null;
    const tapEdits: PendingSteer[] = [];
    for (const s of new Set(seqs.subarray(0, n)))
      for (const e of this.bySeq.get(s)?.edits ?? [])
        if (!native || e.layer === 0) tapEdits.push(e);
    this.prepareNative(native);
    return tapEdits;
  }

  private prepareNative(shared: SequenceVector | null): void {
    const base = this.base;
    if (!base && !shared) {
      if (!this.installed) return;
      if (++this.idleDecodes > IDLE_DECODES_BEFORE_REMOVAL) {
        this.api.llama_set_adapter_cvec(this.ctx(), null, 0, this.nEmbd, -1, -1);
        this.installed = false;
        this.writtenFor = { base: null, shared: null };
        this.written.fill(0);
        return;
      }
    } else this.idleDecodes = 0;
    const w = this.writtenFor;
    if (this.installed && w.base === base && w.shared === (shared?.layers ?? null)) return;
    const target = new Float32Array(this.written.length);
    if (base) target.set(base);
    if (shared)
      for (const [layer, v] of shared.layers) {
        if (layer === 0) continue;
        const at = (layer - 1) * this.nEmbd;
        for (let d = 0; d < this.nEmbd; d++) target[at + d]! += v[d]!;
      }
    this.write(target);
    this.writtenFor = { base, shared: shared?.layers ?? null };
  }

  private write(target: Float32Array): void {
    const n = this.nEmbd;
    if (!this.installed || this.tensors.length === 0) {
      const rc = this.api.llama_set_adapter_cvec(
        this.ctx(),
        target,
        target.length,
        n,
        1,
        this.nLayer - 1,
      );
      if (rc !== 0) throw new Error(`llama.cpp refused the control vector (code ${rc})`);
      this.installed = true;
      this.counters.installs++;
    } else {
      for (let l = 1; l < this.nLayer; l++) {
        const layer = target.subarray((l - 1) * n, l * n);
        if (sameValues(layer, this.written.subarray((l - 1) * n, l * n))) continue;
        this.api.ggml_backend_tensor_set(this.tensors[l]!, Float32Array.from(layer), 0, n * 4);
      }
      this.counters.inPlaceWrites++;
    }
    this.written = target;
  }
}

function sameValues(a: Float32Array, b: Float32Array): boolean {
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
  return true;
}
