// Control vectors in llama.cpp's GGUF format (as repeng and llama.cpp's cvector-generator write
// them): general.architecture = "controlvector", controlvector.layer_count, and one F32 tensor
// `direction.<il>` (il ≥ 1) that llama.cpp adds to layer il's output, l_out-<il>.
import type { Capabilities } from "../engine/types.js";
import { writeGguf } from "../nano/gguf-writer.js";
import { readGguf } from "./gguf-reader.js";

export interface ControlVector {
  /** Hidden size every direction has. */
  nEmbd: number;
  /** Layer index → direction (unscaled). */
  directions: Map<number, Float32Array>;
  /** `controlvector.model_hint`: the architecture it was trained on, when known. */
  modelHint?: string;
}

const DIRECTION = /^direction\.(\d+)$/;

export function readControlVector(path: string): ControlVector {
  const file = readGguf(path);
  const arch = file.metadata.get("general.architecture");
  if (arch !== undefined && arch !== "controlvector")
    throw new Error(
      `${path}: general.architecture is '${String(arch)}', not 'controlvector' (is this a model file?)`,
    );
  const directions = new Map<number, Float32Array>();
  let nEmbd = -1;
  for (const t of file.tensors.values()) {
    const m = DIRECTION.exec(t.name);
    if (!m) throw new Error(`${path}: unexpected tensor '${t.name}' (expected direction.<layer>)`);
    const layer = Number(m[1]);
    if (layer === 0)
      throw new Error(`${path}: direction.0 is invalid (llama.cpp never steers layer 0's input)`);
    if (t.type !== 0 || t.dims.length !== 1)
      throw new Error(`${path}: tensor ${t.name} must be a 1-D F32 vector`);
    if (nEmbd === -1) nEmbd = t.dims[0]!;
    else if (t.dims[0] !== nEmbd)
      throw new Error(`${path}: tensor ${t.name} has ${t.dims[0]} values, others have ${nEmbd}`);
    const data = file.read(t.name);
    // Several tensors for one layer add up, as in llama.cpp's loader.
    const prev = directions.get(layer);
    if (prev) for (let i = 0; i < nEmbd; i++) prev[i]! += data[i]!;
    else directions.set(layer, data);
  }
  if (directions.size === 0) throw new Error(`${path}: no direction.<layer> tensors`);
  const hint = file.metadata.get("controlvector.model_hint");
  return { nEmbd, directions, modelHint: typeof hint === "string" ? hint : undefined };
}

export function writeControlVector(path: string, cv: ControlVector): void {
  const layers = [...cv.directions.keys()].sort((a, b) => a - b);
  if (layers.some((l) => !Number.isInteger(l) || l < 1))
    throw new Error("control vectors have directions for layers ≥ 1 only");
  writeGguf(
    path,
    {
      "general.architecture": { type: "string", value: "controlvector" },
      "controlvector.model_hint": { type: "string", value: cv.modelHint ?? "" },
      "controlvector.layer_count": { type: "u32", value: layers.length },
    },
    layers.map((l) => ({ name: `direction.${l}`, dims: [cv.nEmbd], data: cv.directions.get(l)! })),
  );
}

/** Checks a vector against a model; names the file in the message. */
export function checkFits(cv: ControlVector, caps: Capabilities, path: string): void {
  if (cv.nEmbd !== caps.nEmbd)
    throw new Error(
      `${path}: control vector has ${cv.nEmbd} dimensions, the model's hidden size is ${caps.nEmbd}`,
    );
  for (const l of cv.directions.keys())
    if (l >= caps.nLayer)
      throw new Error(`${path}: direction.${l} is beyond the model's ${caps.nLayer} layers`);
}

/** The directions multiplied by `scale`, ready for Engine.setControlVector. */
export function scaledDirections(cv: ControlVector, scale: number): Map<number, Float32Array> {
  const out = new Map<number, Float32Array>();
  for (const [l, v] of cv.directions)
    out.set(
      l,
      v.map((x) => x * scale),
    );
  return out;
}

/** Adds `cv × scale` into `sum` layer by layer (vectors given together add up, as in llama.cpp). */
export function addScaled(sum: Map<number, Float32Array>, cv: ControlVector, scale: number): void {
  for (const [layer, v] of scaledDirections(cv, scale)) {
    const acc = sum.get(layer);
    if (acc) for (let i = 0; i < v.length; i++) acc[i]! += v[i]!;
    else sum.set(layer, v);
  }
}

/**
 * The buffer llama_set_adapter_cvec takes: nEmbd floats per layer from layer 1 on, zeros for
 * layers without a direction, and the layer range to apply. Layer 0 cannot be expressed.
 */
export function llamaVectorData(
  layers: ReadonlyMap<number, Float32Array>,
  nEmbd: number,
  nLayer: number,
): { data: Float32Array; ilStart: number; ilEnd: number } {
  if (layers.has(0)) throw new Error("llama.cpp's control vectors have no layer 0");
  const data = new Float32Array(nEmbd * (nLayer - 1));
  for (const [layer, v] of layers) data.set(v, (layer - 1) * nEmbd);
  const present = [...layers.keys()];
  return { data, ilStart: Math.min(...present), ilEnd: Math.max(...present) };
}

/** Whether two sets of (scaled) directions are equal, value for value (null: none). */
export function sameDirections(
  a: ReadonlyMap<number, Float32Array> | null,
  b: ReadonlyMap<number, Float32Array> | null,
): boolean {
  if (a === b) return true;
  if (!a || !b || a.size !== b.size) return false;
  for (const [layer, v] of a) {
    const w = b.get(layer);
    if (!w || w.length !== v.length || v.some((x, i) => !Object.is(x, w[i]))) return false;
  }
  return true;
}

/** Parses `FILE[:SCALE]` (llama.cpp's --control-vector-scaled takes the same pair). */
export function parseVectorArgument(arg: string): { path: string; scale: number } {
  const colon = arg.lastIndexOf(":");
  if (colon > 0) {
    const tail = arg.slice(colon + 1);
    const scale = Number(tail);
    if (tail.trim() !== "" && Number.isFinite(scale)) return { path: arg.slice(0, colon), scale };
  }
  return { path: arg, scale: 1 };
}
