// Reads GGUF files (llama.cpp's format): metadata, the tensor table, and the data of F32, F16 or
// BF16 tensors as Float32Array. Used for control-vector files and the logit lens's weights; the
// header is read incrementally so a large model is never loaded whole.
import { closeSync, fstatSync, openSync, readSync } from "node:fs";

export type GgufMetaValue = number | bigint | boolean | string | GgufMetaValue[];

export interface GgufTensorInfo {
  name: string;
  /** Fastest-varying first, as in ggml's ne[]. */
  dims: number[];
  /** ggml type id (0 F32, 1 F16, 30 BF16, others quantized). */
  type: number;
  /** Absolute byte offset of the data in the file. */
  offset: number;
}

export interface GgufFile {
  path: string;
  version: number;
  metadata: Map<string, GgufMetaValue>;
  tensors: Map<string, GgufTensorInfo>;
  /** Reads a tensor as F32 (F32, F16 and BF16 only). */
  read(name: string): Float32Array;
}

const GGML_TYPE_NAMES: Record<number, string> = { 0: "F32", 1: "F16", 30: "BF16" };
const HEADER_CHUNK = 1 << 20;

/** Sequential reads through a file descriptor, refilling a window as needed. */
class FileCursor {
  private buf = Buffer.alloc(0);
  private start = 0;
  pos = 0;
  constructor(
    private readonly fd: number,
    private readonly size: number,
    private readonly path: string,
  ) {}

  private need(n: number): Buffer {
    if (this.pos + n > this.size)
      throw new Error(
        `${this.path}: truncated GGUF (needs byte ${this.pos + n}, file has ${this.size})`,
      );
    if (this.pos < this.start || this.pos + n > this.start + this.buf.length) {
      this.buf = Buffer.alloc(Math.max(n, HEADER_CHUNK));
      readSync(this.fd, this.buf, 0, this.buf.length, this.pos);
      this.start = this.pos;
    }
    const at = this.pos - this.start;
    this.pos += n;
    return this.buf.subarray(at, at + n);
  }
  u8(): number {
    return this.need(1)[0]!;
  }
  u32(): number {
    return this.need(4).readUInt32LE(0);
  }
  u64(): number {
    const v = this.need(8).readBigUInt64LE(0);
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`${this.path}: count ${v} too large`);
    return Number(v);
  }
  str(): string {
    const n = this.u64();
    return this.need(n).toString("utf8");
  }
  value(type: number): GgufMetaValue {
    switch (type) {
      case 0:
        return this.need(1).readUInt8(0);
      case 1:
        return this.need(1).readInt8(0);
      case 2:
        return this.need(2).readUInt16LE(0);
      case 3:
        return this.need(2).readInt16LE(0);
      case 4:
        return this.u32();
      case 5:
        return this.need(4).readInt32LE(0);
      case 6:
        return this.need(4).readFloatLE(0);
      case 7:
        return this.u8() !== 0;
      case 8:
        return this.str();
      case 9: {
        const inner = this.u32();
        const n = this.u64();
        const out: GgufMetaValue[] = [];
        for (let i = 0; i < n; i++) out.push(this.value(inner));
        return out;
      }
      case 10:
        return this.need(8).readBigUInt64LE(0);
      case 11:
        return this.need(8).readBigInt64LE(0);
      case 12:
        return this.need(8).readDoubleLE(0);
      default:
        throw new Error(`${this.path}: unknown GGUF value type ${type} at byte ${this.pos - 4}`);
    }
  }
}

function f16ToF32(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * 2 ** -14 * (frac / 1024);
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * 2 ** (exp - 15) * (1 + frac / 1024);
}

export function readGguf(path: string): GgufFile {
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    const c = new FileCursor(fd, size, path);
    const magic = size >= 4 ? c.u32() : 0;
    if (magic !== 0x46554747) throw new Error(`${path}: not a GGUF file (bad magic)`);
    const version = c.u32();
    if (version < 2 || version > 3) throw new Error(`${path}: unsupported GGUF version ${version}`);
    const nTensors = c.u64();
    const nKv = c.u64();
    const metadata = new Map<string, GgufMetaValue>();
    for (let i = 0; i < nKv; i++) {
      const key = c.str();
      metadata.set(key, c.value(c.u32()));
    }
    const infos: GgufTensorInfo[] = [];
    for (let i = 0; i < nTensors; i++) {
      const name = c.str();
      const nDims = c.u32();
      const dims: number[] = [];
      for (let d = 0; d < nDims; d++) dims.push(c.u64());
      const type = c.u32();
      infos.push({ name, dims, type, offset: c.u64() });
    }
    const alignment = Number(metadata.get("general.alignment") ?? 32);
    const dataStart = Math.ceil(c.pos / alignment) * alignment;
    const tensors = new Map<string, GgufTensorInfo>();
    for (const t of infos) tensors.set(t.name, { ...t, offset: dataStart + t.offset });
    return {
      path,
      version,
      metadata,
      tensors,
      read: (name) => readTensor(path, tensors, name, size),
    };
  } finally {
    closeSync(fd);
  }
}

function readTensor(
  path: string,
  tensors: Map<string, GgufTensorInfo>,
  name: string,
  fileSize: number,
): Float32Array {
  const t = tensors.get(name);
  if (!t) throw new Error(`${path}: no tensor named ${name}`);
  const count = t.dims.reduce((a, b) => a * b, 1);
  const typeName = GGML_TYPE_NAMES[t.type];
  if (!typeName)
    throw new Error(
      `${path}: tensor ${name} is stored as ggml type ${t.type}; only F32, F16 and BF16 can be read`,
    );
  const width = typeName === "F32" ? 4 : 2;
  if (t.offset + count * width > fileSize)
    throw new Error(`${path}: tensor ${name} runs past the end of the file`);
  const raw = Buffer.alloc(count * width);
  const fd = openSync(path, "r");
  try {
    readSync(fd, raw, 0, raw.length, t.offset);
  } finally {
    closeSync(fd);
  }
  const out = new Float32Array(count);
  if (typeName === "F32") new Uint8Array(out.buffer).set(raw);
  else if (typeName === "F16")
    for (let i = 0; i < count; i++) out[i] = f16ToF32(raw.readUInt16LE(2 * i));
  else {
    const u = new Uint32Array(out.buffer);
    for (let i = 0; i < count; i++) u[i] = raw.readUInt16LE(2 * i) << 16;
  }
  return out;
}
