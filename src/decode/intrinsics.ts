// Binds Ruffian's C intrinsics (logits, top-k, entropy, context, KV, hidden states, attention,
// interventions, snapshots, steering, hooks, rewind) to one sequence of the live decode loop.
//
// Units follow the seeds: logits × 1000, probabilities × 10000, entropy in millinats, temperature
// × 1000, top-p × 10000. Every read comes from real engine state; when the engine did not record
// what is asked (observation off, position not decoded) the call fails with a message naming it.
import { IntrinsicRegistry } from "../vm/intrinsics.js";
import type { Engine } from "../engine/types.js";
import type { LogitState } from "./logit-state.js";
import { bindSteeringIntrinsics, type SteeringHost } from "../steer/intrinsics.js";
import type { HookPoint } from "../steer/hook-points.js";

/** What the loop provides to the intrinsics of one sequence. */
export interface IntrinsicHost extends SteeringHost {
  readonly engine: Engine;
  readonly seq: number;
  /** The logits VM code is looking at right now; throws when there are none. */
  logits(): LogitState;
  /** Every token in the sequence's context (prompt, generated and injected). */
  contextTokens(): readonly number[];
  hookSet(fn: string, steps: number): void;
  hookStep(): number;
  checkpoint(): number;
  requestRewind(id: number): void;
  setMemo(text: string): void;
  previousMemo(): string;
  /** Adds `delta` to dimension `dim` of layer `layer`'s hidden state in the next forward pass. */
  addActivation(layer: number, dim: number, delta: number): void;
}

/** tok_str writes at most this many bytes including the NUL (the seeds used char buf[32]). */
export const TOK_STR_MAX = 32;

function checkIndex(what: string, value: number, limit: number): void {
  if (!Number.isInteger(value) || value < 0 || value >= limit) {
    throw new RangeError(`${what} ${value} is outside 0..${limit - 1}`);
  }
}

export function bindIntrinsics(
  host: IntrinsicHost,
  registry = new IntrinsicRegistry(),
): IntrinsicRegistry {
  const { engine, seq } = host;
  const caps = engine.capabilities;
  const milli = (x: number) => Math.round(x * 1000);

  const position = (pos: number) => checkIndex("position", pos, engine.length(seq));
  const layerOf = (layer: number) => checkIndex("layer", layer, caps.nLayer);

  /** A recorded activation row, or an error saying whether it was never recorded or can't be. */
  function recorded(
    row: Float32Array | undefined,
    available: boolean,
    what: string,
    layer: number,
    pos: number,
  ): Float32Array {
    if (row) return row;
    throw new Error(
      available
        ? `${what} of layer ${layer} at position ${pos} was not recorded (observation was off)`
        : `${what} reads are not available from this engine`,
    );
  }

  function hiddenRow(layer: number, pos: number): Float32Array {
    layerOf(layer);
    position(pos);
    return recorded(engine.hidden(seq, layer, pos), caps.reads.hidden, "hidden state", layer, pos);
  }

  // ---- L1: reads ----
  registry.define("int logit_get(int)", (_c, id: number) => milli(host.logits().get(id)));
  registry.define("void logit_set(int, int)", (_c, id: number, v: number) =>
    host.logits().apply({ op: "set", id, value: v / 1000 }),
  );
  registry.define("int logit_argmax(void)", () => host.logits().argmax());
  registry.define("int top_k_token(int)", (_c, rank: number) => host.logits().topToken(rank));
  registry.define("int top_k_prob(int)", (_c, rank: number) =>
    Math.round(host.logits().topProb(rank) * 10000),
  );
  registry.define("int vocab_entropy(void)", () => milli(host.logits().entropy()));
  registry.define("int vocab_top1_prob(void)", () => Math.round(host.logits().topProb(0) * 10000));
  registry.define("int context_token(int)", (_c, pos: number) => {
    const tokens = host.contextTokens();
    checkIndex("context position", pos, tokens.length);
    return tokens[pos]!;
  });
  registry.define("int context_len(void)", () => host.contextTokens().length);
  registry.define("int tok_str(int, char *)", (ctx, id: number, buf: number) => {
    checkIndex("token id", id, caps.nVocab);
    return ctx.writeString(buf, engine.tokenText(id), TOK_STR_MAX);
  });
  registry.define("int tok_count(void)", () => caps.nVocab);
  registry.define("int kv_layers(void)", () => caps.nLayer);
  registry.define("int kv_heads(void)", () => caps.nHeadKv);
  registry.define("int kv_head_dim(void)", () => caps.headDim);
  registry.define("int kv_seq_len(void)", () => engine.length(seq));
  registry.define(
    "float kv_read(int, int, int, int, int)",
    (_c, layer: number, head: number, pos: number, isKey: number, dim: number) => {
      layerOf(layer);
      checkIndex("KV head", head, caps.nHeadKv);
      position(pos);
      checkIndex("dimension", dim, caps.headDim);
      const row = engine.kv(seq, layer, head, pos, isKey ? "k" : "v");
      return recorded(row, caps.reads.kv, "KV row", layer, pos)[dim]!;
    },
  );
  registry.define(
    "float emb_read(int, int, int)",
    (_c, layer: number, pos: number, dim: number) => {
      checkIndex("dimension", dim, caps.nEmbd);
      return hiddenRow(layer, pos)[dim]!;
    },
  );

  // ---- L2: analyses over the recorded activations ----
  registry.define("float cosine_sim(int, int, int)", (_c, layer: number, a: number, b: number) => {
    const x = hiddenRow(layer, a);
    const y = hiddenRow(layer, b);
    let dot = 0;
    let nx = 0;
    let ny = 0;
    for (let i = 0; i < x.length; i++) {
      dot += x[i]! * y[i]!;
      nx += x[i]! * x[i]!;
      ny += y[i]! * y[i]!;
    }
    return nx > 0 && ny > 0 ? dot / Math.sqrt(nx * ny) : 0;
  });
  registry.define("float emb_variance(int, int)", (_c, layer: number, pos: number) => {
    const x = hiddenRow(layer, pos);
    let mean = 0;
    for (let i = 0; i < x.length; i++) mean += x[i]!;
    mean /= x.length;
    let v = 0;
    for (let i = 0; i < x.length; i++) v += (x[i]! - mean) ** 2;
    return v / x.length;
  });
  registry.define(
    "void attn_score(int, int, int, float *, int)",
    (ctx, layer: number, head: number, qPos: number, out: number, n: number) => {
      layerOf(layer);
      checkIndex("head", head, caps.nHead);
      position(qPos);
      if (!Number.isInteger(n) || n < 0) throw new RangeError(`attn_score count ${n} is negative`);
      const row = recorded(
        engine.attention(seq, layer, head, qPos),
        caps.reads.attention,
        "attention",
        layer,
        qPos,
      );
      // Keys beyond the query (the future) get probability 0: attention is causal.
      for (let i = 0; i < n; i++) ctx.writeFloat(out + 4 * i, i < row.length ? row[i]! : 0);
    },
  );

  // ---- L3: interventions on the distribution about to be sampled ----
  registry.define("void logit_temperature(int)", (_c, t: number) =>
    host.logits().apply({ op: "temperature", t: t / 1000 }),
  );
  registry.define("void logit_mask_below(int)", (_c, threshold: number) =>
    host.logits().apply({ op: "mask-below", threshold: threshold / 1000 }),
  );
  registry.define("void logit_top_p(int)", (_c, p: number) =>
    host.logits().apply({ op: "top-p", p: p / 10000 }),
  );

  // ---- L4: snapshots ----
  registry.define("void logit_snapshot(int)", (_c, slot: number) =>
    host.logits().takeSnapshot(slot),
  );
  registry.define("void logit_restore(int)", (_c, slot: number) =>
    host.logits().apply({ op: "restore", slot }),
  );
  registry.define("float logit_diff(int)", (_c, slot: number) => host.logits().diff(slot) * 1000);

  // ---- steering ----
  registry.define(
    "void act_add(int, int, int)",
    (_c, layer: number, dim: number, delta: number) => {
      if (!caps.steer) throw new Error("activation steering is not available from this engine");
      layerOf(layer);
      checkIndex("dimension", dim, caps.nEmbd);
      host.addActivation(layer, dim, delta / 1000);
    },
  );

  // ---- hooks ----
  registry.define("void hook_set(char *, int)", (ctx, name: number, steps: number) => {
    const fn = ctx.readString(name, 256);
    if (!ctx.hasFunction(fn)) throw new Error(`hook_set: no function named '${fn}'`);
    if (!Number.isInteger(steps) || steps < 0)
      throw new RangeError(`hook_set: bad step count ${steps}`);
    host.hookSet(fn, steps);
  });
  registry.define("int hook_step(void)", () => host.hookStep());

  // ---- rewind ----
  registry.define("int vm_checkpoint(void)", () => host.checkpoint());
  registry.define("void vm_rewind(int)", (_c, id: number) => host.requestRewind(id));
  registry.define("void vm_rewind_memo(char *)", (ctx, p: number) =>
    host.setMemo(ctx.readString(p, 4096)),
  );
  registry.define("int vm_rewind_read(int)", (_c, i: number) => {
    const memo = host.previousMemo();
    checkIndex("memo index", i, memo.length);
    return memo.charCodeAt(i);
  });
  registry.define("int vm_rewind_len(void)", () => host.previousMemo().length);

  // ---- steering by hook-point name, control vectors, lookahead ----
  bindSteeringIntrinsics(host, registry);

  return registry;
}

/**
 * A stable intrinsic host that forwards to whichever generation currently owns the sequence, so
 * one VmSession (functions, globals, memory[]) can outlive a single generation, as in a chat.
 * Between generations every model intrinsic fails with a clear message.
 */
export class LiveBinding implements IntrinsicHost {
  target: IntrinsicHost | null = null;

  constructor(
    readonly engine: Engine,
    readonly seq: number,
  ) {}

  private live(): IntrinsicHost {
    if (!this.target) throw new Error("no generation is running on this sequence");
    return this.target;
  }
  logits(): LogitState {
    return this.live().logits();
  }
  contextTokens(): readonly number[] {
    return this.live().contextTokens();
  }
  hookSet(fn: string, steps: number): void {
    this.live().hookSet(fn, steps);
  }
  hookStep(): number {
    return this.live().hookStep();
  }
  checkpoint(): number {
    return this.live().checkpoint();
  }
  requestRewind(id: number): void {
    this.live().requestRewind(id);
  }
  setMemo(text: string): void {
    this.live().setMemo(text);
  }
  previousMemo(): string {
    return this.live().previousMemo();
  }
  addActivation(layer: number, dim: number, delta: number): void {
    this.live().addActivation(layer, dim, delta);
  }
  loadVector(name: string): number {
    return this.live().loadVector(name);
  }
  applyVector(id: number, scale: number): void {
    this.live().applyVector(id, scale);
  }
  clearVector(): void {
    this.live().clearVector();
  }
  lookahead(token: number, steps: number, score: "entropy" | HookPoint): number {
    return this.live().lookahead(token, steps, score);
  }
}
