// Binds the intrinsics of the one table (intrinsic-table.ts) to one sequence of the live
// decode loop, and keeps a stable binding that outlives a single generation (chat).
import { IntrinsicRegistry } from "../vm/intrinsics.js";
import type { Engine } from "../engine/types.js";
import { EngineError } from "../engine/errors.js";
import type { LogitState } from "./logit-state.js";
import { INTRINSIC_TABLE, intrinsicName, type IntrinsicHost } from "./intrinsic-table.js";
import type { HookPoint } from "../steer/hook-points.js";

export type { IntrinsicHost } from "./intrinsic-table.js";

export function bindIntrinsics(
  host: IntrinsicHost,
  registry = new IntrinsicRegistry(),
): IntrinsicRegistry {
  for (const spec of INTRINSIC_TABLE) {
    const impl = spec.impl;
    const name = intrinsicName(spec);
    registry.define(spec.signature, (ctx, ...args) => {
      try {
        return impl(host, ctx, ...args);
      } catch (e) {
        throw namedFailure(name, e);
      }
    });
  }
  return registry;
}

/** An intrinsic's refusal names the intrinsic ("emb_read: hidden state reads are not available
 * …"), so the VM's error says which call failed as well as where. VM traps and host limits
 * (RangeError) pass through as they are. */
function namedFailure(name: string, e: unknown): unknown {
  const plain =
    e instanceof EngineError ||
    (e instanceof Error && Object.getPrototypeOf(e) === Error.prototype);
  if (!plain || e.message.startsWith(name)) return e;
  return new Error(`${name}: ${e.message}`);
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
