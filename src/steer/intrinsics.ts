// The steering intrinsics of Ruffian's C dialect: activation reads by TransformerLens name
// (act_read, act_norm), control vectors per sequence and per token (cvec_load, cvec_apply,
// cvec_clear) and lookahead on a scratch continuation (vm_lookahead, vm_lookahead_norm).
// Units follow the other intrinsics: scales × 1000, entropy in millinats.
import type { Engine } from "../engine/types.js";
import type { IntrinsicRegistry } from "../vm/intrinsics.js";
import { parseHookPoint, type HookPoint } from "./hook-points.js";

/** What the decode loop provides for one sequence. */
export interface SteeringHost {
  readonly engine: Engine;
  readonly seq: number;
  /** Id of a named control vector (loading it on first use); throws for an unknown name. */
  loadVector(name: string): number;
  /** Applies vector `id` × `scale` from the next forward pass on, replacing any other. */
  applyVector(id: number, scale: number): void;
  clearVector(): void;
  /** Mean of `score` over a scratch continuation that starts with `token` (see Engine.lookahead). */
  lookahead(token: number, steps: number, score: "entropy" | HookPoint): number;
}

/** Hook-point names as VM code passes them, parsed once per name. */
function hookResolver(engine: Engine): (name: string) => HookPoint {
  const cache = new Map<string, HookPoint>();
  return (name) => {
    let p = cache.get(name);
    if (!p) {
      p = parseHookPoint(name, engine.capabilities.nLayer);
      cache.set(name, p);
    }
    return p;
  };
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
    case "rot_k":
    case "v": {
      const parts: Float32Array[] = [];
      for (let h = 0; h < caps.nHeadKv; h++) {
        const r = engine.kv(seq, p.layer, h, pos, p.kind === "rot_k" ? "k" : "v");
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
  if (!row) throw new Error(`${p.name} at position ${pos} was not recorded (observation was off)`);
  return row;
}

export function l2(row: Float32Array): number {
  let s = 0;
  for (let i = 0; i < row.length; i++) s += row[i]! * row[i]!;
  return Math.sqrt(s);
}

export function bindSteeringIntrinsics(host: SteeringHost, registry: IntrinsicRegistry): void {
  const { engine, seq } = host;
  const hook = hookResolver(engine);

  registry.define(
    "float act_read(char *, int, int)",
    (ctx, name: number, pos: number, dim: number) => {
      const row = activationRow(engine, seq, hook(ctx.readString(name, 256)), pos);
      if (!Number.isInteger(dim) || dim < 0 || dim >= row.length)
        throw new RangeError(`dimension ${dim} is outside 0..${row.length - 1}`);
      return row[dim]!;
    },
  );
  registry.define("float act_norm(char *, int)", (ctx, name: number, pos: number) =>
    l2(activationRow(engine, seq, hook(ctx.readString(name, 256)), pos)),
  );
  registry.define("int cvec_load(char *)", (ctx, name: number) =>
    host.loadVector(ctx.readString(name, 256)),
  );
  registry.define("void cvec_apply(int, int)", (_c, id: number, scale: number) =>
    host.applyVector(id, scale / 1000),
  );
  registry.define("void cvec_clear(void)", () => host.clearVector());
  registry.define("int vm_lookahead(int, int)", (_c, token: number, steps: number) =>
    Math.round(host.lookahead(token, steps, "entropy") * 1000),
  );
  registry.define(
    "float vm_lookahead_norm(int, int, char *)",
    (ctx, token: number, steps: number, name: number) =>
      host.lookahead(token, steps, hook(ctx.readString(name, 256))),
  );
}
