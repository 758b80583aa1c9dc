// Struct layouts of llama.cpp's C API, mirrored by hand from include/llama.h of the pinned release
// (node-llama-cpp 3.22.1 → llama.cpp v0.5.0 bundle), plus the start-up guard that checks them.
import koffi, { type LibraryHandle, type TypeObject } from "koffi";

/** The llama.cpp release these layouts were copied from (node-llama-cpp's binariesGithubRelease). */
export const PINNED_LLAMA_RELEASE = "v0.5.0";

// Field order and types follow llama.h exactly; a mismatch silently corrupts memory, so the
// gcc probe in test/engine/abi.test.ts checks every offset against the bundled header.
export const contextParamsFields = {
  n_ctx: "uint32_t",
  n_batch: "uint32_t",
  n_ubatch: "uint32_t",
  n_seq_max: "uint32_t",
  n_rs_seq: "uint32_t",
  n_outputs_max: "uint32_t",
  n_outputs_max_per_seq: "uint32_t",
  n_threads: "int32_t",
  n_threads_batch: "int32_t",
  ctx_type: "int32_t",
  rope_scaling_type: "int32_t",
  pooling_type: "int32_t",
  attention_type: "int32_t",
  flash_attn_type: "int32_t",
  rope_freq_base: "float",
  rope_freq_scale: "float",
  yarn_ext_factor: "float",
  yarn_attn_factor: "float",
  yarn_beta_fast: "float",
  yarn_beta_slow: "float",
  yarn_orig_ctx: "uint32_t",
  defrag_thold: "float",
  cb_eval: "void *",
  cb_eval_user_data: "void *",
  type_k: "int32_t",
  type_v: "int32_t",
  abort_callback: "void *",
  abort_callback_data: "void *",
  embeddings: "bool",
  offload_kqv: "bool",
  no_perf: "bool",
  op_offload: "bool",
  swa_full: "bool",
  kv_unified: "bool",
  samplers: "void *",
  n_samplers: "size_t",
  ctx_other: "void *",
} as const;

export const modelParamsFields = {
  devices: "void *",
  tensor_buft_overrides: "void *",
  n_gpu_layers: "int32_t",
  split_mode: "int32_t",
  load_mode: "int32_t",
  lazy_mode: "int32_t",
  main_gpu: "int32_t",
  tensor_split: "void *",
  progress_callback: "void *",
  progress_callback_user_data: "void *",
  kv_overrides: "void *",
  vocab_only: "bool",
  check_tensors: "bool",
  use_extra_bufts: "bool",
  no_host: "bool",
  no_alloc: "bool",
  load_mtp: "bool",
} as const;

export const batchFields = {
  n_tokens: "int32_t",
  token: "void *",
  embd: "void *",
  pos: "void *",
  n_seq_id: "void *",
  seq_id: "void *",
  logits: "void *",
} as const;

export const chatMessageFields = { role: "const char *", content: "const char *" } as const;

export const ContextParams = koffi.struct("ruffian_llama_context_params", contextParamsFields);
export const ModelParams = koffi.struct("ruffian_llama_model_params", modelParamsFields);
export const Batch = koffi.struct("ruffian_llama_batch", batchFields);
export const ChatMessage = koffi.struct("ruffian_llama_chat_message", chatMessageFields);

/**
 * `struct ggml_tensor` is only read through a pointer, field by field, so only the offsets the
 * engine uses are mirrored (verified by the same gcc probe).
 */
export const ggmlTensorLayout = {
  size: 336,
  offsets: { type: 0, ne: 16, nb: 48, op: 80, op_params: 84, src: 152, data: 248, name: 256 },
} as const;

/** ggml enum values the engine compares against (ggml.h of the pinned release). */
export const GGML_TYPE_F32 = 0;
export const GGML_TYPE_F16 = 1;
export const GGML_TYPE_I32 = 26;
export const GGML_TYPE_I64 = 27;
export const GGML_OP_NONE = 0;
export const GGML_OP_ADD = 2;
export const GGML_OP_GET_ROWS = 40;
export const GGML_OP_SET_ROWS = 42;
export const GGML_OP_RESHAPE = 36;
export const GGML_OP_SOFT_MAX = 46;
export const GGML_OP_ROPE = 48;
export const GGML_BACKEND_DEVICE_TYPE_GPU = 1;
export const GGML_BACKEND_DEVICE_TYPE_IGPU = 2;

export const LLAMA_FLASH_ATTN_TYPE_AUTO = -1;
export const LLAMA_FLASH_ATTN_TYPE_DISABLED = 0;

/** A struct layout as the guard sees it: its size and where each field starts. */
export interface StructLayout {
  size: number;
  offsets: Record<string, number>;
}

export function layoutOf(type: TypeObject): StructLayout {
  const offsets: Record<string, number> = {};
  for (const [name, member] of Object.entries(type.members ?? {}))
    offsets[name] = (member as { offset: number }).offset;
  return { size: type.size, offsets };
}

export class AbiMismatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AbiMismatchError";
  }
}

/** A default value llama.cpp v0.5.0 writes, used as a fingerprint of the field's position. */
interface Fingerprint {
  field: string;
  kind: "u32" | "i32" | "f32" | "u8" | "ptr";
  value: number;
}

// Defaults from llama_context_default_params() in src/llama-context.cpp of the pinned release,
// chosen so that a field inserted or removed anywhere before them moves a distinctive value.
const contextFingerprint: Fingerprint[] = [
  { field: "n_ctx", kind: "u32", value: 512 },
  { field: "n_batch", kind: "u32", value: 2048 },
  { field: "n_ubatch", kind: "u32", value: 512 },
  { field: "n_seq_max", kind: "u32", value: 1 },
  { field: "n_outputs_max_per_seq", kind: "u32", value: 1 },
  { field: "n_threads", kind: "i32", value: 4 },
  { field: "n_threads_batch", kind: "i32", value: 4 },
  { field: "rope_scaling_type", kind: "i32", value: -1 },
  { field: "flash_attn_type", kind: "i32", value: -1 },
  { field: "rope_freq_base", kind: "f32", value: 0 },
  { field: "yarn_ext_factor", kind: "f32", value: -1 },
  { field: "defrag_thold", kind: "f32", value: -1 },
  { field: "cb_eval", kind: "ptr", value: 0 },
  { field: "type_k", kind: "i32", value: GGML_TYPE_F16 },
  { field: "type_v", kind: "i32", value: GGML_TYPE_F16 },
  { field: "embeddings", kind: "u8", value: 0 },
  { field: "offload_kqv", kind: "u8", value: 1 },
  { field: "no_perf", kind: "u8", value: 1 },
  { field: "op_offload", kind: "u8", value: 1 },
  { field: "swa_full", kind: "u8", value: 1 },
  { field: "kv_unified", kind: "u8", value: 0 },
  { field: "ctx_other", kind: "ptr", value: 0 },
];

const modelFingerprint: Fingerprint[] = [
  { field: "devices", kind: "ptr", value: 0 },
  { field: "n_gpu_layers", kind: "i32", value: -1 },
  { field: "split_mode", kind: "i32", value: 1 },
  { field: "load_mode", kind: "i32", value: -1 },
  { field: "lazy_mode", kind: "i32", value: 1 },
  { field: "main_gpu", kind: "i32", value: 0 },
  { field: "kv_overrides", kind: "ptr", value: 0 },
  { field: "vocab_only", kind: "u8", value: 0 },
  { field: "use_extra_bufts", kind: "u8", value: 1 },
  { field: "load_mtp", kind: "u8", value: 0 },
];

const MARKER = 0xa5;
const PROBE_BYTES = 512;

/**
 * Calls a `struct X f(void)` default-params function so that it writes into a marker-filled
 * buffer we own, and returns that buffer. On x86-64 (System V and Win64) a struct this large is
 * returned through a hidden pointer passed as the first argument, so declaring the function as
 * `void *f(void *out)` hands it our buffer. Other ABIs (AArch64 uses x8) return undefined.
 */
export function callIntoMarkedBuffer(lib: LibraryHandle, symbol: string): Buffer | undefined {
  if (process.arch !== "x64") return undefined;
  const fn = lib.func(symbol, "void *", ["void *"]);
  const out = Buffer.alloc(PROBE_BYTES, MARKER);
  fn(out);
  return out;
}

/** One past the last byte the callee wrote (bytes still equal to the marker count as unwritten). */
function writtenExtent(buf: Buffer): number {
  for (let i = buf.length - 1; i >= 0; i--) if (buf[i] !== MARKER) return i + 1;
  return 0;
}

function readField(buf: Buffer, offset: number, kind: Fingerprint["kind"]): number {
  if (offset < 0 || offset + 8 > buf.length) return Number.NaN;
  switch (kind) {
    case "u32":
      return buf.readUInt32LE(offset);
    case "i32":
      return buf.readInt32LE(offset);
    case "f32":
      return buf.readFloatLE(offset);
    case "u8":
      return buf.readUInt8(offset);
    case "ptr":
      return Number(buf.readBigUInt64LE(offset));
  }
}

function checkFingerprint(
  what: string,
  buf: Buffer,
  layout: StructLayout,
  fingerprint: Fingerprint[],
): string[] {
  const problems: string[] = [];
  for (const fp of fingerprint) {
    const offset = layout.offsets[fp.field];
    if (offset === undefined) {
      problems.push(`${what}.${fp.field} is missing from the mirrored layout`);
      continue;
    }
    const got = readField(buf, offset, fp.kind);
    if (got !== fp.value)
      problems.push(`${what}.${fp.field} at offset ${offset}: expected ${fp.value}, found ${got}`);
  }
  return problems;
}

function checkWrittenSize(what: string, buf: Buffer, layout: StructLayout): string[] {
  const extent = writtenExtent(buf);
  // The tail may legitimately end in padding the callee leaves untouched, but never more than
  // the alignment (8) short, and it must never write past the struct.
  if (extent > layout.size || extent <= layout.size - 8)
    return [`${what}: the library wrote ${extent} bytes, the mirrored struct has ${layout.size}`];
  return [];
}

/**
 * Refuses to run when the loaded libllama does not have the struct layouts this binding was
 * written for: the size the library writes and a fingerprint of its default values must match.
 */
export function verifyAbi(
  lib: LibraryHandle,
  layouts: { context: StructLayout; model: StructLayout } = {
    context: layoutOf(ContextParams),
    model: layoutOf(ModelParams),
  },
  libraryDescription = "libllama",
): void {
  const problems: string[] = [];
  const checks = [
    ["llama_context_params", "llama_context_default_params", layouts.context, contextFingerprint],
    ["llama_model_params", "llama_model_default_params", layouts.model, modelFingerprint],
  ] as const;
  for (const [what, symbol, layout, fingerprint] of checks) {
    let buf = callIntoMarkedBuffer(lib, symbol);
    if (buf) problems.push(...checkWrittenSize(what, buf, layout));
    else {
      // Without the hidden-pointer trick, let koffi return the struct and re-encode it with
      // our layout: only the fingerprint can be checked then.
      const type = what === "llama_context_params" ? ContextParams : ModelParams;
      const value = lib.func(symbol, type, [])();
      buf = Buffer.alloc(PROBE_BYTES, MARKER);
      koffi.encode(buf, type, value);
    }
    problems.push(...checkFingerprint(what, buf, layout, fingerprint));
  }
  if (problems.length > 0)
    throw new AbiMismatchError(
      `${libraryDescription} does not match the struct layouts this binding mirrors from ` +
        `llama.cpp ${PINNED_LLAMA_RELEASE} (node-llama-cpp must stay pinned at 3.22.1):\n  ` +
        problems.join("\n  "),
    );
}
