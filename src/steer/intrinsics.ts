// What the steering intrinsics (act_read, act_norm, cvec_*, vm_lookahead*, declared in the one
// table src/decode/intrinsic-table.ts) need: hook points by name, recorded rows, norms, and the
// host interface for control vectors and lookahead.
import type { Engine } from "../engine/types.js";
import { kvKindOf, parseHookPoint, type HookPoint } from "./hook-points.js";

/** What the decode loop provides for one sequence (part of IntrinsicHost). */
export interface SteeringHost {
  /** Id of a named control vector (loading it on first use); throws for an unknown name. */
  loadVector(name: string): number;
  /** Applies vector `id` × `scale` from the next forward pass on, replacing any other. */
  applyVector(id: number, scale: number): void;
  clearVector(): void;
  /** Mean of `score` over a scratch continuation that starts with `token` (see Engine.lookahead). */
  lookahead(token: number, steps: number, score: "entropy" | HookPoint): number;
}

const hookCache = new Map<string, HookPoint>();
/** A hook-point name as VM code passes it, parsed once per name and layer count. */
export function hookNamed(engine: Engine, name: string): HookPoint {
  const key = `${engine.capabilities.nLayer}:${name}`;
  let p = hookCache.get(key);
  if (!p) {
    p = parseHookPoint(name, engine.capabilities.nLayer);
    if (hookCache.size > 1024) hookCache.clear();
    hookCache.set(key, p);
  }
  return p;
}

/** One recorded row of a hook point at a position: the residual, final norm, keys or values. */
export function activationRow(
  engine: Engine,
  seq: number,
  p: HookPoint,
  pos: number,
): Float32Array {
  const caps = engine.capabilities;
  if (!Number.isInteger(pos) || pos < 0 || pos >= engine.length(seq))
    throw new RangeError(`position ${pos} is outside 0..${engine.length(seq) - 1}`);
  let row: Float32Array | undefined;
  switch (p.kind) {
    case "resid_post":
      row = engine.hidden(seq, p.layer, pos);
      break;
    case "normalized":
      row = engine.finalNorm(seq, pos);
      break;
    case "k":
    case "rot_k":
    case "v": {
      const parts: Float32Array[] = [];
      const kind = kvKindOf(p.kind)!;
      for (let h = 0; h < caps.nHeadKv; h++) {
        const r = engine.kv(seq, p.layer, h, pos, kind);
        if (!r) break;
        parts.push(r);
      }
      if (parts.length === caps.nHeadKv) {
        row = new Float32Array(caps.nEmbdKv);
        parts.forEach((r, h) => row!.set(r, h * caps.headDim));
      }
      break;
    }
    default:
      throw new Error(
        `${p.name} cannot be read with act_read (use attn_score for patterns, logit_get for logits)`,
      );
  }
  if (!row) {
    const reads = caps.reads;
    const available =
      p.kind === "resid_post" ? reads.hidden : p.kind === "normalized" ? reads.finalNorm : reads.kv;
    throw new Error(
      available
        ? `${p.name} at position ${pos} was not recorded (observation was off)`
        : `${p.name} reads are not available from this engine`,
    );
  }
  return row;
}

export function l2(row: Float32Array): number {
  let s = 0;
  for (let i = 0; i < row.length; i++) s += row[i]! * row[i]!;
  return Math.sqrt(s);
}
