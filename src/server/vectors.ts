// Control vectors for `ruffian serve`: `--control-vector NAME=PATH[:SCALE]` registers a vector
// under a name at start; a request's `ruffian.controlVectors: [{name, scale}]` applies registered
// ones to that request's sequence only. Requests never name files: only what the operator
// registered can be applied. `--control-vector PATH[:SCALE]` (no NAME=) stays llama.cpp's
// context-wide vector for every request (src/steer/vector-args.ts).
import type { Engine } from "../engine/types.js";
import {
  checkFits,
  parseVectorArgument,
  readControlVector,
  addScaled,
  type ControlVector,
} from "../steer/control-vector.js";
import { badRequest } from "./errors.js";

/** A `--control-vector` value that registers a named vector: `NAME=PATH[:SCALE]`. */
const NAMED = /^([A-Za-z_][A-Za-z0-9_.-]*)=(.+)$/;

/** Splits `--control-vector` values into named registrations and context-wide files. */
export function splitVectorArguments(args: readonly string[] = []): {
  named: string[];
  global: string[];
} {
  const named = args.filter((a) => NAMED.test(a));
  return { named, global: args.filter((a) => !NAMED.test(a)) };
}

interface Registered {
  vector: ControlVector;
  /** The scale given at start: a request that names no scale uses it. */
  scale: number;
}

export class VectorRegistry {
  private readonly byName = new Map<string, Registered>();
  /** Every registered vector by name, for VM code's cvec_load("name"). */
  readonly library = new Map<string, ControlVector>();

  /** Reads and checks every `NAME=PATH[:SCALE]`; a bad file or a repeated name throws. */
  constructor(args: readonly string[], engine: Engine) {
    for (const arg of args) {
      const [, name, rest] = NAMED.exec(arg)!;
      if (this.byName.has(name!))
        throw new Error(`--control-vector: the name '${name}' is registered twice`);
      const { path, scale } = parseVectorArgument(rest!);
      const vector = readControlVector(path);
      checkFits(vector, engine.capabilities, path);
      this.byName.set(name!, { vector, scale });
      this.library.set(name!, vector);
    }
  }

  get size(): number {
    return this.byName.size;
  }

  get names(): string[] {
    return [...this.byName.keys()];
  }

  /**
   * The sum of the named vectors, each at the request's scale (else the one given at start), as
   * one layer → direction map; a name that was not registered is a 400 naming it.
   */
  combine(
    wanted: ReadonlyArray<{ name: string; scale?: number }>,
  ): Map<number, Float32Array> | undefined {
    if (wanted.length === 0) return undefined;
    const sum = new Map<number, Float32Array>();
    wanted.forEach(({ name, scale }, i) => {
      const r = this.byName.get(name);
      if (!r)
        throw badRequest(
          this.byName.size === 0
            ? `control vector '${name}' is not registered: this server has none (start it with --control-vector NAME=PATH)`
            : `control vector '${name}' is not registered; this server has: ${this.names.join(", ")}`,
          `ruffian.controlVectors[${i}].name`,
        );
      addScaled(sum, r.vector, scale ?? r.scale);
    });
    return sum;
  }
}
