// A writer for GGUF v3 files (llama.cpp's model format): metadata key/values, tensor infos and
// 32-byte-aligned F32 tensor data. Used to export ruffian-nano from the trained weights.
import { openSync, writeSync, closeSync } from "node:fs";

export type GgufValue =
  | { type: "u32"; value: number }
  | { type: "i32"; value: number }
  | { type: "f32"; value: number }
  | { type: "bool"; value: boolean }
  | { type: "string"; value: string }
  | { type: "string[]"; value: readonly string[] }
  | { type: "f32[]"; value: ArrayLike<number> }
  | { type: "i32[]"; value: ArrayLike<number> };

export interface GgufTensor {
  name: string;
  /** GGUF dimension order: fastest-varying first (a PyTorch [out, in] weight is [in, out] here). */
  dims: readonly number[];
  data: Float32Array;
  /** Storage type (default f32). f16 halves a large table such as a 151,936-row embedding. */
  type?: "f32" | "f16";
}

const ALIGNMENT = 32;
const GGUF_TYPE = { u32: 4, i32: 5, f32: 6, bool: 7, string: 8, array: 9 } as const;
const GGML_TYPE = { f32: 0, f16: 1 } as const;

/** IEEE binary16 bits of a float, rounded to nearest even (overflow to infinity). */
export function toHalfBits(value: number): number {
  const f = new Float32Array([value]);
  const x = new Uint32Array(f.buffer)[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let half = mant >>> shift;
    const rest = mant & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    if (rest > mid || (rest === mid && half & 1)) half++;
    return sign | half;
  }
  let half = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && half & 1)) half++;
  return sign | half;
}

/** A tensor's bytes as stored in the file. */
function tensorBytes(t: GgufTensor): Buffer {
  if ((t.type ?? "f32") === "f32")
    return Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  const out = Buffer.alloc(t.data.length * 2);
  for (let i = 0; i < t.data.length; i++) out.writeUInt16LE(toHalfBits(t.data[i]!), i * 2);
  return out;
}

/** Accumulates little-endian bytes into growing chunks. */
class ByteSink {
  private chunks: Buffer[] = [];
  length = 0;
  push(buf: Buffer): void {
    this.chunks.push(buf);
    this.length += buf.length;
  }
  u32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    this.push(b);
  }
  i32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeInt32LE(v);
    this.push(b);
  }
  u64(v: number): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    this.push(b);
  }
  f32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeFloatLE(v);
    this.push(b);
  }
  str(s: string): void {
    const bytes = Buffer.from(s, "utf8");
    this.u64(bytes.length);
    this.push(bytes);
  }
  pad(): void {
    const rem = this.length % ALIGNMENT;
    if (rem) this.push(Buffer.alloc(ALIGNMENT - rem));
  }
  concat(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

function writeValue(sink: ByteSink, v: GgufValue): void {
  switch (v.type) {
    case "u32":
      sink.u32(GGUF_TYPE.u32);
      return sink.u32(v.value);
    case "i32":
      sink.u32(GGUF_TYPE.i32);
      return sink.i32(v.value);
    case "f32":
      sink.u32(GGUF_TYPE.f32);
      return sink.f32(v.value);
    case "bool":
      sink.u32(GGUF_TYPE.bool);
      return sink.push(Buffer.from([v.value ? 1 : 0]));
    case "string":
      sink.u32(GGUF_TYPE.string);
      return sink.str(v.value);
    case "string[]":
      sink.u32(GGUF_TYPE.array);
      sink.u32(GGUF_TYPE.string);
      sink.u64(v.value.length);
      for (const s of v.value) sink.str(s);
      return;
    case "f32[]":
      sink.u32(GGUF_TYPE.array);
      sink.u32(GGUF_TYPE.f32);
      sink.u64(v.value.length);
      for (let i = 0; i < v.value.length; i++) sink.f32(v.value[i]!);
      return;
    case "i32[]":
      sink.u32(GGUF_TYPE.array);
      sink.u32(GGUF_TYPE.i32);
      sink.u64(v.value.length);
      for (let i = 0; i < v.value.length; i++) sink.i32(v.value[i]!);
      return;
  }
}

export function writeGguf(
  path: string,
  metadata: Record<string, GgufValue>,
  tensors: readonly GgufTensor[],
): void {
  const head = new ByteSink();
  head.push(Buffer.from("GGUF", "ascii"));
  head.u32(3);
  head.u64(tensors.length);
  head.u64(Object.keys(metadata).length);
  for (const [key, value] of Object.entries(metadata)) {
    head.str(key);
    writeValue(head, value);
  }
  let offset = 0;
  for (const t of tensors) {
    const elements = t.dims.reduce((a, b) => a * b, 1);
    if (elements !== t.data.length) {
      throw new Error(`tensor ${t.name}: dims ${t.dims.join("x")} but ${t.data.length} values`);
    }
    head.str(t.name);
    head.u32(t.dims.length);
    for (const d of t.dims) head.u64(d);
    head.u32(GGML_TYPE[t.type ?? "f32"]);
    head.u64(offset);
    offset +=
      Math.ceil((t.data.length * ((t.type ?? "f32") === "f16" ? 2 : 4)) / ALIGNMENT) * ALIGNMENT;
  }
  head.pad();
  const fd = openSync(path, "w");
  try {
    writeSync(fd, head.concat());
    for (const t of tensors) {
      const bytes = tensorBytes(t);
      writeSync(fd, bytes);
      const rem = bytes.length % ALIGNMENT;
      if (rem) writeSync(fd, Buffer.alloc(ALIGNMENT - rem));
    }
  } finally {
    closeSync(fd);
  }
}
