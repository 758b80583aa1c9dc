// The one table of Ruffian's C intrinsics: name and C signature, implementation, units and a
// one-line doc. The VM's list of reserved names (src/vm/intrinsics.ts), the per-sequence
// bindings (src/decode/intrinsics.ts) and the table in docs/decode-loop.md are all derived
// from it; add an intrinsic here and nowhere else.
//
// Units follow the seeds: logits × 1000, probabilities × 10000, entropy in millinats,
// temperature × 1000, top-p × 10000. Every read comes from real engine state; when the engine
// did not record what is asked (observation off, position not decoded) the call fails with a
// message naming it.
import type { Engine } from "../engine/types.js";
import type { IntrinsicContext } from "../vm/intrinsics.js";
import type { LogitState } from "./logit-state.js";
import { activationRow, hookNamed, l2, type SteeringHost } from "../steer/intrinsics.js";

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

/** Sections of the docs table, in order. */
export type IntrinsicGroup =
  "reads" | "analyses" | "interventions" | "snapshots" | "steering" | "hooks" | "rewind";

/**
 * What an intrinsic can touch, for the loop's overlap of a step's work with the next decode
 * (docs/decode-loop.md): a hook whose session can only reach `reads-logits`, `model` and
 * `hooks` intrinsics cannot change which token is sampled, so it may run after sampling.
 * - reads-logits: reads the step's logits (or a copy of them), changes none;
 * - writes-logits: changes the logits the token is sampled from;
 * - model: constants of the model and its vocabulary;
 * - hooks: the hook schedule and step;
 * - context: the sequence's tokens, KV cache, recorded activations, checkpoints and rewind;
 * - engine: steers the model or runs scratch decodes.
 */
export type IntrinsicEffect =
  "reads-logits" | "writes-logits" | "model" | "hooks" | "context" | "engine";

/** Effects a hook may have and still run after its step's token was sampled. */
export const SAMPLING_NEUTRAL: ReadonlySet<IntrinsicEffect> = new Set([
  "reads-logits",
  "model",
  "hooks",
]);

export interface IntrinsicSpec {
  /** C prototype with parameter names, e.g. "int logit_get(int id)"; the name is taken from it. */
  readonly signature: string;
  readonly group: IntrinsicGroup;
  readonly effect: IntrinsicEffect;
  /** What the numbers mean, e.g. "logit × 1000" ("" when there is nothing to scale). */
  readonly units: string;
  /** One line for the docs table. */
  readonly doc: string;
  readonly impl: (host: IntrinsicHost, ctx: IntrinsicContext, ...args: any[]) => number | void;
}

function checkIndex(what: string, value: number, limit: number): void {
  if (!Number.isInteger(value) || value < 0 || value >= limit) {
    throw new RangeError(`${what} ${value} is outside 0..${limit - 1}`);
  }
}

const milli = (x: number) => Math.round(x * 1000);
const permyriad = (x: number) => Math.round(x * 10000);

const checkPosition = (h: IntrinsicHost, pos: number) =>
  checkIndex("position", pos, h.engine.length(h.seq));
const checkLayer = (h: IntrinsicHost, layer: number) =>
  checkIndex("layer", layer, h.engine.capabilities.nLayer);

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

function hiddenRow(h: IntrinsicHost, layer: number, pos: number): Float32Array {
  checkLayer(h, layer);
  checkPosition(h, pos);
  const row = h.engine.hidden(h.seq, layer, pos);
  return recorded(row, h.engine.capabilities.reads.hidden, "hidden state", layer, pos);
}

export const INTRINSIC_TABLE: readonly IntrinsicSpec[] = [
  // ---- L1: reads ----
  {
    signature: "int logit_get(int id)",
    group: "reads",
    effect: "reads-logits",
    units: "logit × 1000",
    doc: "the logit of token `id` as the next step will sample it",
    impl: (h, _c, id: number) => milli(h.logits().get(id)),
  },
  {
    signature: "void logit_set(int id, int v)",
    group: "reads",
    effect: "writes-logits",
    units: "logit × 1000",
    doc: "sets the logit of token `id` to v / 1000",
    impl: (h, _c, id: number, v: number) => h.logits().apply({ op: "set", id, value: v / 1000 }),
  },
  {
    signature: "int logit_argmax(void)",
    group: "reads",
    effect: "reads-logits",
    units: "token id",
    doc: "the token with the highest logit",
    impl: (h) => h.logits().argmax(),
  },
  {
    signature: "int top_k_token(int rank)",
    group: "reads",
    effect: "reads-logits",
    units: "token id",
    doc: "the token at `rank` (0–63) by probability; reflects edits",
    impl: (h, _c, rank: number) => h.logits().topToken(rank),
  },
  {
    signature: "int top_k_prob(int rank)",
    group: "reads",
    effect: "reads-logits",
    units: "probability × 10000",
    doc: "the probability of the token at `rank` (0–63); reflects edits",
    impl: (h, _c, rank: number) => permyriad(h.logits().topProb(rank)),
  },
  {
    signature: "int vocab_entropy(void)",
    group: "reads",
    effect: "reads-logits",
    units: "millinats",
    doc: "entropy of the next-token distribution",
    impl: (h) => milli(h.logits().entropy()),
  },
  {
    signature: "int vocab_top1_prob(void)",
    group: "reads",
    effect: "reads-logits",
    units: "probability × 10000",
    doc: "probability of the most likely token",
    impl: (h) => permyriad(h.logits().topProb(0)),
  },
  {
    signature: "int context_token(int pos)",
    group: "reads",
    effect: "context",
    units: "token id",
    doc: "the token at `pos` in the sequence (prompt, generated and injected)",
    impl: (h, _c, pos: number) => {
      const tokens = h.contextTokens();
      checkIndex("context position", pos, tokens.length);
      return tokens[pos]!;
    },
  },
  {
    signature: "int context_len(void)",
    group: "reads",
    effect: "context",
    units: "tokens",
    doc: "tokens in the sequence so far",
    impl: (h) => h.contextTokens().length,
  },
  {
    signature: "int tok_str(int id, char *buf)",
    group: "reads",
    effect: "model",
    units: "bytes",
    doc: `writes token \`id\`'s text (≤ ${TOK_STR_MAX - 1} bytes + NUL) to \`buf\`; returns its length`,
    impl: (h, ctx, id: number, buf: number) => {
      checkIndex("token id", id, h.engine.capabilities.nVocab);
      return ctx.writeString(buf, h.engine.tokenText(id), TOK_STR_MAX);
    },
  },
  {
    signature: "int tok_count(void)",
    group: "reads",
    effect: "model",
    units: "tokens",
    doc: "vocabulary size",
    impl: (h) => h.engine.capabilities.nVocab,
  },
  {
    signature: "int kv_layers(void)",
    group: "reads",
    effect: "model",
    units: "",
    doc: "number of layers",
    impl: (h) => h.engine.capabilities.nLayer,
  },
  {
    signature: "int kv_heads(void)",
    group: "reads",
    effect: "model",
    units: "",
    doc: "number of KV heads",
    impl: (h) => h.engine.capabilities.nHeadKv,
  },
  {
    signature: "int kv_head_dim(void)",
    group: "reads",
    effect: "model",
    units: "",
    doc: "dimension of one KV head",
    impl: (h) => h.engine.capabilities.headDim,
  },
  {
    signature: "int kv_seq_len(void)",
    group: "reads",
    effect: "context",
    units: "positions",
    doc: "positions of the sequence in the KV cache",
    impl: (h) => h.engine.length(h.seq),
  },
  {
    signature: "float kv_read(int layer, int head, int pos, int is_key, int dim)",
    group: "reads",
    effect: "context",
    units: "raw",
    doc: "element `dim` of the post-RoPE K (is_key ≠ 0) or V row, any layer",
    impl: (h, _c, layer: number, head: number, pos: number, isKey: number, dim: number) => {
      const caps = h.engine.capabilities;
      checkLayer(h, layer);
      checkIndex("KV head", head, caps.nHeadKv);
      checkPosition(h, pos);
      checkIndex("dimension", dim, caps.headDim);
      const row = h.engine.kv(h.seq, layer, head, pos, isKey ? "k" : "v");
      return recorded(row, caps.reads.kv, "KV row", layer, pos)[dim]!;
    },
  },
  {
    signature: "float emb_read(int layer, int pos, int dim)",
    group: "reads",
    effect: "context",
    units: "raw",
    doc: "element `dim` of the hidden state after `layer` (`l_out-N`)",
    impl: (h, _c, layer: number, pos: number, dim: number) => {
      checkIndex("dimension", dim, h.engine.capabilities.nEmbd);
      return hiddenRow(h, layer, pos)[dim]!;
    },
  },

  // ---- L2: analyses over the recorded activations ----
  {
    signature: "float cosine_sim(int layer, int a, int b)",
    group: "analyses",
    effect: "context",
    units: "−1..1",
    doc: "cosine similarity of the hidden states at positions `a` and `b`",
    impl: (h, _c, layer: number, a: number, b: number) => {
      const x = hiddenRow(h, layer, a);
      const y = hiddenRow(h, layer, b);
      let dot = 0;
      let nx = 0;
      let ny = 0;
      for (let i = 0; i < x.length; i++) {
        dot += x[i]! * y[i]!;
        nx += x[i]! * x[i]!;
        ny += y[i]! * y[i]!;
      }
      return nx > 0 && ny > 0 ? dot / Math.sqrt(nx * ny) : 0;
    },
  },
  {
    signature: "float emb_variance(int layer, int pos)",
    group: "analyses",
    effect: "context",
    units: "raw",
    doc: "variance over the dimensions of the hidden state at `pos`",
    impl: (h, _c, layer: number, pos: number) => {
      const x = hiddenRow(h, layer, pos);
      let mean = 0;
      for (let i = 0; i < x.length; i++) mean += x[i]!;
      mean /= x.length;
      let v = 0;
      for (let i = 0; i < x.length; i++) v += (x[i]! - mean) ** 2;
      return v / x.length;
    },
  },
  {
    signature: "void attn_score(int layer, int head, int q_pos, float *out, int n)",
    group: "analyses",
    effect: "context",
    units: "probability",
    doc: "attention probabilities of the query at `q_pos` over keys 0..n−1 (0 beyond the query)",
    impl: (h, ctx, layer: number, head: number, qPos: number, out: number, n: number) => {
      const caps = h.engine.capabilities;
      checkLayer(h, layer);
      checkIndex("head", head, caps.nHead);
      checkPosition(h, qPos);
      if (!Number.isInteger(n) || n < 0) throw new RangeError(`attn_score count ${n} is negative`);
      const row = recorded(
        h.engine.attention(h.seq, layer, head, qPos),
        caps.reads.attention,
        "attention",
        layer,
        qPos,
      );
      // Keys beyond the query (the future) get probability 0: attention is causal.
      for (let i = 0; i < n; i++) ctx.writeFloat(out + 4 * i, i < row.length ? row[i]! : 0);
    },
  },

  // ---- L3: interventions on the distribution about to be sampled ----
  {
    signature: "void logit_temperature(int t)",
    group: "interventions",
    effect: "writes-logits",
    units: "temperature × 1000",
    doc: "divides every logit by t / 1000",
    impl: (h, _c, t: number) => h.logits().apply({ op: "temperature", t: t / 1000 }),
  },
  {
    signature: "void logit_mask_below(int thr)",
    group: "interventions",
    effect: "writes-logits",
    units: "logit × 1000",
    doc: "sets logits below thr / 1000 to −10000",
    impl: (h, _c, threshold: number) =>
      h.logits().apply({ op: "mask-below", threshold: threshold / 1000 }),
  },
  {
    signature: "void logit_top_p(int p)",
    group: "interventions",
    effect: "writes-logits",
    units: "probability × 10000",
    doc: "keeps the smallest most likely set with mass ≥ p / 10000; masks the rest (−10000)",
    impl: (h, _c, p: number) => h.logits().apply({ op: "top-p", p: p / 10000 }),
  },

  // ---- L4: snapshots ----
  {
    signature: "void logit_snapshot(int slot)",
    group: "snapshots",
    effect: "reads-logits",
    units: "slot 0–7",
    doc: "saves the current logits in `slot`",
    impl: (h, _c, slot: number) => h.logits().takeSnapshot(slot),
  },
  {
    signature: "void logit_restore(int slot)",
    group: "snapshots",
    effect: "writes-logits",
    units: "slot 0–7",
    doc: "replaces the current logits with those saved in `slot`",
    impl: (h, _c, slot: number) => h.logits().apply({ op: "restore", slot }),
  },
  {
    signature: "float logit_diff(int slot)",
    group: "snapshots",
    effect: "reads-logits",
    units: "logit × 1000",
    doc: "Σ |current − saved| over the vocabulary",
    impl: (h, _c, slot: number) => h.logits().diff(slot) * 1000,
  },

  // ---- steering ----
  {
    signature: "void act_add(int layer, int dim, int delta)",
    group: "steering",
    effect: "engine",
    units: "activation × 1000",
    doc: "adds delta / 1000 to the layer's hidden state in the next forward pass",
    impl: (h, _c, layer: number, dim: number, delta: number) => {
      const caps = h.engine.capabilities;
      if (!caps.steer) throw new Error("activation steering is not available from this engine");
      checkLayer(h, layer);
      checkIndex("dimension", dim, caps.nEmbd);
      h.addActivation(layer, dim, delta / 1000);
    },
  },

  {
    signature: "float act_read(char *name, int pos, int dim)",
    group: "steering",
    effect: "context",
    units: "activation",
    doc: "one value of a hook point by TransformerLens name, e.g. `blocks.2.hook_resid_post` (docs/steering.md)",
    impl: (h, ctx, name: number, pos: number, dim: number) => {
      const row = activationRow(
        h.engine,
        h.seq,
        hookNamed(h.engine, ctx.readString(name, 256)),
        pos,
      );
      checkIndex("dimension", dim, row.length);
      return row[dim]!;
    },
  },
  {
    signature: "float act_norm(char *name, int pos)",
    group: "steering",
    effect: "context",
    units: "activation",
    doc: "L2 norm of a hook point's row at a position",
    impl: (h, ctx, name: number, pos: number) =>
      l2(activationRow(h.engine, h.seq, hookNamed(h.engine, ctx.readString(name, 256)), pos)),
  },
  {
    signature: "int cvec_load(char *name)",
    group: "steering",
    effect: "engine",
    units: "id",
    doc: "id of a control vector given with --control-vector (by basename)",
    impl: (h, ctx, name: number) => h.loadVector(ctx.readString(name, 256)),
  },
  {
    signature: "void cvec_apply(int id, int scale)",
    group: "steering",
    effect: "engine",
    units: "scale × 1000",
    doc: "applies control vector `id` × scale / 1000 to this sequence from the next forward pass on",
    impl: (h, _c, id: number, scale: number) => h.applyVector(id, scale / 1000),
  },
  {
    signature: "void cvec_clear(void)",
    group: "steering",
    effect: "engine",
    units: "",
    doc: "removes this sequence's control vector",
    impl: (h) => h.clearVector(),
  },
  {
    signature: "int vm_lookahead(int token, int steps)",
    group: "steering",
    effect: "engine",
    units: "millinats",
    doc: "mean entropy over a scratch continuation (token, then greedy), discarded afterwards",
    impl: (h, _c, token: number, steps: number) => milli(h.lookahead(token, steps, "entropy")),
  },
  {
    signature: "float vm_lookahead_norm(int token, int steps, char *name)",
    group: "steering",
    effect: "engine",
    units: "activation",
    doc: "mean act_norm of a hook point over such a scratch continuation",
    impl: (h, ctx, token: number, steps: number, name: number) =>
      h.lookahead(token, steps, hookNamed(h.engine, ctx.readString(name, 256))),
  },

  // ---- hooks ----
  {
    signature: "void hook_set(char *fn, int n)",
    group: "hooks",
    effect: "hooks",
    units: "steps",
    doc: "runs `fn(step)` before each of the next n samplings",
    impl: (h, ctx, name: number, steps: number) => {
      const fn = ctx.readString(name, 256);
      if (!ctx.hasFunction(fn)) throw new Error(`hook_set: no function named '${fn}'`);
      if (!Number.isInteger(steps) || steps < 0)
        throw new RangeError(`hook_set: bad step count ${steps}`);
      h.hookSet(fn, steps);
    },
  },
  {
    signature: "int hook_step(void)",
    group: "hooks",
    effect: "hooks",
    units: "steps",
    doc: "the current hook step",
    impl: (h) => h.hookStep(),
  },

  // ---- rewind ----
  {
    signature: "int vm_checkpoint(void)",
    group: "rewind",
    effect: "context",
    units: "checkpoint id",
    doc: "records the sequence's length, text and scanner state",
    impl: (h) => h.checkpoint(),
  },
  {
    signature: "void vm_rewind(int id)",
    group: "rewind",
    effect: "context",
    units: "checkpoint id",
    doc: "when the program returns, rewinds KV cache and text to checkpoint `id`",
    impl: (h, _c, id: number) => h.requestRewind(id),
  },
  {
    signature: "void vm_rewind_memo(char *memo)",
    group: "rewind",
    effect: "context",
    units: "≤ 4096 bytes",
    doc: "leaves a memo for the next timeline",
    impl: (h, ctx, p: number) => h.setMemo(ctx.readString(p, 4096)),
  },
  {
    signature: "int vm_rewind_read(int i)",
    group: "rewind",
    effect: "context",
    units: "character code",
    doc: "character `i` of the memo left by the previous timeline",
    impl: (h, _c, i: number) => {
      const memo = h.previousMemo();
      checkIndex("memo index", i, memo.length);
      return memo.charCodeAt(i);
    },
  },
  {
    signature: "int vm_rewind_len(void)",
    group: "rewind",
    effect: "context",
    units: "characters",
    doc: "length of the memo left by the previous timeline",
    impl: (h) => h.previousMemo().length,
  },
];

/** The function name in a C prototype ("int logit_get(int id)" → "logit_get"). The registry
 * parses the signature for real when binding; a test checks that both agree. */
export function intrinsicName(spec: IntrinsicSpec): string {
  const m = /([A-Za-z_]\w*)\s*\(/.exec(spec.signature);
  if (!m) throw new Error(`intrinsic signature '${spec.signature}' has no function name`);
  return m[1]!;
}

/** The intrinsics that cannot change which token a step samples (effect in SAMPLING_NEUTRAL). */
export const SAMPLING_NEUTRAL_INTRINSICS: ReadonlySet<string> = new Set(
  INTRINSIC_TABLE.filter((spec) => SAMPLING_NEUTRAL.has(spec.effect)).map(intrinsicName),
);
