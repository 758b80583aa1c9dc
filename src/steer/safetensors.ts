// The safetensors format (Hugging Face): an 8-byte little-endian header length, a JSON header
// naming each tensor's dtype, shape and byte range plus string metadata, then the raw data.
import { closeSync, openSync, readFileSync, writeSync } from "node:fs";

export interface NamedTensor {
  name: string;
  shape: readonly number[];
  data: Float32Array;
}

export interface SafetensorsFile {
  metadata: Record<string, string>;
  tensors: Map<string, NamedTensor>;
}

interface HeaderEntry {
  dtype: string;
  shape: number[];
  data_offsets: [number, number];
}

/** Writes F32 tensors in the given order; returns the file's size in bytes. */
export function writeSafetensors(
  path: string,
  tensors: readonly NamedTensor[],
  metadata: Record<string, string> = {},
): number {
  const header: Record<string, unknown> = { __metadata__: metadata };
  let offset = 0;
  for (const t of tensors) {
    const count = t.shape.reduce((a, b) => a * b, 1);
    if (count !== t.data.length)
      throw new Error(`tensor ${t.name}: shape ${t.shape.join("x")} but ${t.data.length} values`);
    header[t.name] = {
      dtype: "F32",
      shape: [...t.shape],
      data_offsets: [offset, offset + count * 4],
    };
    offset += count * 4;
  }
  let json = Buffer.from(JSON.stringify(header), "utf8");
  // The data section starts 8-byte aligned (the format pads the header with spaces).
  const pad = (8 - (json.length % 8)) % 8;
  if (pad) json = Buffer.concat([json, Buffer.alloc(pad, 0x20)]);
  const size = Buffer.alloc(8);
  size.writeBigUInt64LE(BigInt(json.length));
  const fd = openSync(path, "w");
  try {
    writeSync(fd, size);
    writeSync(fd, json);
    for (const t of tensors)
      writeSync(fd, new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength));
  } finally {
    closeSync(fd);
  }
  return 8 + json.length + offset;
}

/** Reads a safetensors file of F32 tensors, checking every byte range against the file. */
export function readSafetensors(path: string): SafetensorsFile {
  const bytes = readFileSync(path);
  if (bytes.length < 8) throw new Error(`${path}: too short for a safetensors file`);
  const headerLength = Number(bytes.readBigUInt64LE(0));
  if (8 + headerLength > bytes.length)
    throw new Error(`${path}: header length ${headerLength} exceeds the file`);
  const header = JSON.parse(bytes.toString("utf8", 8, 8 + headerLength)) as Record<
    string,
    HeaderEntry | Record<string, string>
  >;
  const base = 8 + headerLength;
  const tensors = new Map<string, NamedTensor>();
  let metadata: Record<string, string> = {};
  for (const [name, entry] of Object.entries(header)) {
    if (name === "__metadata__") {
      metadata = entry as Record<string, string>;
      continue;
    }
    const e = entry as HeaderEntry;
    if (e.dtype !== "F32") throw new Error(`${path}: tensor ${name} has dtype ${e.dtype}, not F32`);
    const [begin, end] = e.data_offsets;
    if (base + end > bytes.length || end - begin !== e.shape.reduce((a, b) => a * b, 1) * 4)
      throw new Error(`${path}: tensor ${name} has a bad byte range ${begin}..${end}`);
    const data = new Float32Array((end - begin) / 4);
    new Uint8Array(data.buffer).set(bytes.subarray(base + begin, base + end));
    tensors.set(name, { name, shape: e.shape, data });
  }
  return { metadata, tensors };
}
