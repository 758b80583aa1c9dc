// TransformerLens-style names for the activations the engine records ("blocks.2.hook_resid_post"),
// the one table that maps each name to llama.cpp's graph node and to the engine read serving it.
import type { Capabilities, KvKind } from "../engine/types.js";

export type HookKind = "resid_post" | "pattern" | "k" | "rot_k" | "v" | "normalized" | "logits";

export interface HookPointSpec {
  kind: HookKind;
  /** The name with `{L}` standing for the layer index (absent for model-wide points). */
  pattern: string;
  /** llama.cpp's graph node, `{L}` likewise. */
  node: string;
  /** Shape of one traced tensor, TransformerLens order without the batch axis. */
  shape: string;
  /** Which engine recording serves it. */
  read: string;
  note: string;
}

/** Every hook point; docs/steering.md shows this table and a test checks they agree. */
export const HOOK_POINTS: readonly HookPointSpec[] = [
  {
    kind: "resid_post",
    pattern: "blocks.{L}.hook_resid_post",
    node: "l_out-{L}",
    shape: "[pos, d_model]",
    read: "hidden(seq, L, pos)",
    note: "the residual stream after block L; control vectors and act_add edit it",
  },
  {
    kind: "pattern",
    pattern: "blocks.{L}.attn.hook_pattern",
    node: "kq_soft_max-{L}",
    shape: "[head, query_pos, key_pos]",
    read: "attention(seq, L, head, q)",
    note: "softmax probabilities; KV cells mapped back to key positions, future keys 0",
  },
  {
    kind: "k",
    pattern: "blocks.{L}.attn.hook_k",
    node: "Kcur-{L} (the 3-D reshape, input of the ROPE node)",
    shape: "[pos, head_kv, d_head]",
    read: 'kv(seq, L, head, pos, "k_pre_rope")',
    note: "keys before RoPE, as TransformerLens' hook_k (after the K norm in models with one: Kcur_normed-{L})",
  },
  {
    kind: "rot_k",
    pattern: "blocks.{L}.attn.hook_rot_k",
    node: "Kcur-{L} (the ROPE node)",
    shape: "[pos, head_kv, d_head]",
    read: 'kv(seq, L, head, pos, "k")',
    note: "keys after RoPE, as stored in the KV cache (which holds them as F16)",
  },
  {
    kind: "v",
    pattern: "blocks.{L}.attn.hook_v",
    node: "Vcur-{L} (the 3-D reshape)",
    shape: "[pos, head_kv, d_head]",
    read: 'kv(seq, L, head, pos, "v")',
    note: "values",
  },
  {
    kind: "normalized",
    pattern: "ln_final.hook_normalized",
    node: "result_norm",
    shape: "[pos, d_model]",
    read: "finalNorm(seq, pos)",
    note: "RMS-normalised and multiplied by output_norm.weight (TransformerLens folds that weight into W_U)",
  },
  {
    kind: "logits",
    pattern: "logits",
    node: "result_output",
    shape: "[pos, d_vocab]",
    read: "logits(seq) (last position)",
    note: "what run_with_cache returns as logits",
  },
];

/** The engine's K/V read serving a key or value hook point (undefined for other kinds). */
export function kvKindOf(kind: HookKind): KvKind | undefined {
  return kind === "k" ? "k_pre_rope" : kind === "rot_k" ? "k" : kind === "v" ? "v" : undefined;
}

export interface HookPoint {
  name: string;
  kind: HookKind;
  /** -1 for model-wide points. */
  layer: number;
  spec: HookPointSpec;
}

function matcher(pattern: string): RegExp {
  const escaped = pattern.replace(/[.]/g, "\\.").replace("{L}", "(\\d+)");
  return new RegExp(`^${escaped}$`);
}

/** Resolves one exact name, checking the layer against the model. */
export function parseHookPoint(name: string, nLayer: number): HookPoint {
  for (const spec of HOOK_POINTS) {
    const m = matcher(spec.pattern).exec(name);
    if (!m) continue;
    const layer = m[1] === undefined ? -1 : Number(m[1]);
    if (layer >= nLayer)
      throw new Error(`hook point '${name}': layer ${layer} is outside 0..${nLayer - 1}`);
    return { name, kind: spec.kind, layer, spec };
  }
  throw new Error(
    `unknown hook point '${name}' (known: ${HOOK_POINTS.map((s) => s.pattern).join(", ")})`,
  );
}

/**
 * Expands comma-separated names and globs (`*` matches any run of characters, as in
 * TransformerLens' names_filter strings) into the model's hook points, in table then layer order.
 */
export function expandHookPoints(
  patterns: string,
  caps: Pick<Capabilities, "nLayer">,
): HookPoint[] {
  const all: HookPoint[] = [];
  for (const spec of HOOK_POINTS) {
    if (spec.pattern.includes("{L}")) {
      for (let l = 0; l < caps.nLayer; l++)
        all.push({ name: spec.pattern.replace("{L}", String(l)), kind: spec.kind, layer: l, spec });
    } else all.push({ name: spec.pattern, kind: spec.kind, layer: -1, spec });
  }
  const chosen = new Set<HookPoint>();
  for (const raw of patterns.split(",")) {
    const p = raw.trim();
    if (!p) continue;
    if (!p.includes("*")) {
      const exact = parseHookPoint(p, caps.nLayer);
      chosen.add(all.find((h) => h.name === exact.name)!);
      continue;
    }
    const re = new RegExp(
      "^" +
        p
          .split("*")
          .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
          .join(".*") +
        "$",
    );
    const hits = all.filter((h) => re.test(h.name));
    if (hits.length === 0) throw new Error(`hook pattern '${p}' matches no hook point`);
    for (const h of hits) chosen.add(h);
  }
  if (chosen.size === 0) throw new Error("no hook points given");
  return all.filter((h) => chosen.has(h));
}
