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
}

const ALIGNMENT = 32;
const GGUF_TYPE = { u32: 4, i32: 5, f32: 6, bool: 7, string: 8, array: 9 } as const;
const GGML_TYPE_F32 = 0;

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
    head.u32(GGML_TYPE_F32);
    head.u64(offset);
    offset += Math.ceil(t.data.byteLength / ALIGNMENT) * ALIGNMENT;
  }
  head.pad();
  const fd = openSync(path, "w");
  try {
    writeSync(fd, head.concat());
    for (const t of tensors) {
      const bytes = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
      writeSync(fd, bytes);
      const rem = bytes.length % ALIGNMENT;
      if (rem) writeSync(fd, Buffer.alloc(ALIGNMENT - rem));
    }
  } finally {
    closeSync(fd);
  }
}
