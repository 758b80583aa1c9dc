// llama.cpp's own GGUF code (gguf.h in libggml-base, the code its control-vector loader and
// cvector-generator use), reached through koffi: an independent reader and writer for tests.
import koffi from "koffi";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadLlamaLibrary } from "../../src/engine/llama/library.js";
import { ggmlTensorLayout } from "../../src/engine/llama/abi.js";

const lib = await loadLlamaLibrary("cpu");
const base = koffi.load(join(lib.directory, "libggml-base.so"));
koffi.struct("test_gguf_init_params", { no_alloc: "bool", ctx: "void *" });
koffi.struct("test_ggml_init_params", {
  mem_size: "size_t",
  mem_buffer: "void *",
  no_alloc: "bool",
});
const gguf = {
  initFromFile: base.func("void *gguf_init_from_file(const char *f, test_gguf_init_params p)"),
  initEmpty: base.func("void *gguf_init_empty()"),
  free: base.func("void gguf_free(void *ctx)"),
  findKey: base.func("int64_t gguf_find_key(void *ctx, const char *key)"),
  getValStr: base.func("const char *gguf_get_val_str(void *ctx, int64_t id)"),
  getValU32: base.func("uint32_t gguf_get_val_u32(void *ctx, int64_t id)"),
  nTensors: base.func("int64_t gguf_get_n_tensors(void *ctx)"),
  tensorName: base.func("const char *gguf_get_tensor_name(void *ctx, int64_t id)"),
  tensorOffset: base.func("size_t gguf_get_tensor_offset(void *ctx, int64_t id)"),
  tensorType: base.func("int gguf_get_tensor_type(void *ctx, int64_t id)"),
  tensorSize: base.func("size_t gguf_get_tensor_size(void *ctx, int64_t id)"),
  dataOffset: base.func("size_t gguf_get_data_offset(void *ctx)"),
  setValStr: base.func("void gguf_set_val_str(void *ctx, const char *key, const char *val)"),
  setValU32: base.func("void gguf_set_val_u32(void *ctx, const char *key, uint32_t val)"),
  addTensor: base.func("void gguf_add_tensor(void *ctx, void *tensor)"),
  writeToFile: base.func("bool gguf_write_to_file(void *ctx, const char *f, bool only_meta)"),
  ggmlInit: base.func("void *ggml_init(test_ggml_init_params p)"),
  ggmlFree: base.func("void ggml_free(void *ctx)"),
  newTensor1d: base.func("void *ggml_new_tensor_1d(void *ctx, int type, int64_t n)"),
  setName: base.func("void *ggml_set_name(void *t, const char *name)"),
};

export interface GgmlGgufFile {
  strings: Record<string, string | undefined>;
  u32: Record<string, number | undefined>;
  tensors: Map<string, { type: number; data: Float32Array }>;
}

/** Parses a GGUF file with ggml's parser (which rejects malformed files) and reads F32 tensors. */
export function readWithGgml(path: string, strKeys: string[], u32Keys: string[]): GgmlGgufFile {
  const ctx = gguf.initFromFile(path, { no_alloc: true, ctx: null });
  if (!ctx) throw new Error(`ggml's gguf_init_from_file rejected ${path}`);
  try {
    const strings: GgmlGgufFile["strings"] = {};
    const u32: GgmlGgufFile["u32"] = {};
    for (const k of strKeys) {
      const id = gguf.findKey(ctx, k);
      strings[k] = id >= 0 ? gguf.getValStr(ctx, id) : undefined;
    }
    for (const k of u32Keys) {
      const id = gguf.findKey(ctx, k);
      u32[k] = id >= 0 ? gguf.getValU32(ctx, id) : undefined;
    }
    const bytes = readFileSync(path);
    const dataStart = Number(gguf.dataOffset(ctx));
    const tensors = new Map<string, { type: number; data: Float32Array }>();
    for (let i = 0; i < Number(gguf.nTensors(ctx)); i++) {
      const off = dataStart + Number(gguf.tensorOffset(ctx, i));
      const size = Number(gguf.tensorSize(ctx, i));
      const data = new Float32Array(size / 4);
      new Uint8Array(data.buffer).set(bytes.subarray(off, off + size));
      tensors.set(gguf.tensorName(ctx, i), { type: gguf.tensorType(ctx, i), data });
    }
    return { strings, u32, tensors };
  } finally {
    gguf.free(ctx);
  }
}

/** Writes a control vector the way llama.cpp's cvector-generator does (gguf.h + ggml tensors). */
export function writeWithGgml(path: string, directions: Map<number, Float32Array>, hint: string) {
  const nEmbd = [...directions.values()][0]!.length;
  const ggmlCtx = gguf.ggmlInit({
    mem_size: (directions.size + 1) * (nEmbd * 4 + 1024),
    mem_buffer: null,
    no_alloc: false,
  });
  const ctx = gguf.initEmpty();
  try {
    gguf.setValStr(ctx, "general.architecture", "controlvector");
    gguf.setValStr(ctx, "controlvector.model_hint", hint);
    gguf.setValU32(ctx, "controlvector.layer_count", directions.size);
    for (const [layer, v] of directions) {
      const t = gguf.newTensor1d(ggmlCtx, 0, nEmbd);
      gguf.setName(t, `direction.${layer}`);
      const data = koffi.decode(t, ggmlTensorLayout.offsets.data, "void *");
      koffi.encode(data, "float", Array.from(v), nEmbd);
      gguf.addTensor(ctx, t);
    }
    if (!gguf.writeToFile(ctx, path, false)) throw new Error(`gguf_write_to_file failed: ${path}`);
  } finally {
    gguf.free(ctx);
    gguf.ggmlFree(ggmlCtx);
  }
}
