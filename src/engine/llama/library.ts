// Finds and loads the llama.cpp shared libraries that node-llama-cpp's prebuilt packages install,
// picks the backend (CUDA, Metal or Vulkan when usable, CPU otherwise) and declares the C API.
import koffi, { type LibraryHandle, type TypeObject } from "koffi";
import { createRequire } from "node:module";
import { existsSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { isMainThread } from "node:worker_threads";
import {
  AbiMismatchError,
  ChatMessage,
  ContextParams,
  GGML_BACKEND_DEVICE_TYPE_GPU,
  GGML_BACKEND_DEVICE_TYPE_IGPU,
  ModelParams,
  verifyAbi,
} from "./abi.js";
import { bindGgmlCpuKernels } from "./ggml-cpu-kernels.js";

// koffi's type registry is global: declaring these names once per process keeps reloads cheap.
void ContextParams;
void ModelParams;
void ChatMessage;

export type DeviceChoice = "auto" | "cpu" | "cuda" | "vulkan" | "metal";
type GpuKind = Exclude<DeviceChoice, "auto" | "cpu">;

export class LibraryLoadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LibraryLoadError";
  }
}

function platformTag(): string {
  if (process.platform === "darwin") return "mac";
  if (process.platform === "win32") return "win";
  return process.platform;
}

/** node-llama-cpp's prebuilt package folder for a backend on this platform, e.g. linux-x64-cuda. */
function packageName(kind: GpuKind | "cpu"): string {
  const base = `${platformTag()}-${process.arch}`;
  if (kind === "cpu") return base;
  if (kind === "metal") return base === "mac-arm64" ? "mac-arm64-metal" : "";
  return `${base}-${kind}`;
}

const require = createRequire(import.meta.url);

/** The bins directory of an installed @node-llama-cpp/<name> package, if present. */
function binsDirectory(name: string): string | undefined {
  if (!name) return undefined;
  let entry: string;
  try {
    // The packages export only their entry point (dist/index.js), not package.json.
    entry = require.resolve(`@node-llama-cpp/${name}`);
  } catch {
    return undefined;
  }
  const dir = join(dirname(dirname(entry)), "bins", name);
  return existsSync(dir) ? dir : undefined;
}

function findLibrary(dir: string, stem: RegExp): string {
  const file = readdirSync(dir).find((f) => stem.test(f));
  if (!file) throw new LibraryLoadError(`no library matching ${stem} in ${dir}`);
  return join(dir, file);
}

/** What is asked for in auto mode: the GPU kinds node-llama-cpp considers usable here. */
async function autoGpuKinds(): Promise<GpuKind[]> {
  try {
    const { getLlamaGpuTypes } = await import("node-llama-cpp");
    const kinds = await getLlamaGpuTypes("supported");
    return kinds.filter((k): k is GpuKind => k === "cuda" || k === "vulkan" || k === "metal");
  } catch {
    return [];
  }
}

/** The device choices that can work here: auto, cpu, and each GPU kind node-llama-cpp finds
 * usable whose prebuilt package is installed. */
export async function availableDevices(): Promise<DeviceChoice[]> {
  const gpus = (await autoGpuKinds()).filter((k) => binsDirectory(packageName(k)) !== undefined);
  return ["auto", "cpu", ...gpus];
}

async function unavailable(device: DeviceChoice, why: string): Promise<LibraryLoadError> {
  const available = await availableDevices();
  return new LibraryLoadError(
    `device "${device}" is not available (${why}); available here: ${available.join(", ")}`,
  );
}

/* eslint-disable @typescript-eslint/no-explicit-any */
type Fn = ((...args: any[]) => any) & { async: (...args: any[]) => void };

/** The subset of llama.cpp's C API the engine calls. Pointers are bigint (koffi 3). */
export interface LlamaApi {
  llama_backend_init: Fn;
  llama_model_default_params: Fn;
  llama_context_default_params: Fn;
  llama_model_load_from_file: Fn;
  llama_model_free: Fn;
  llama_init_from_model: Fn;
  llama_free: Fn;
  llama_model_get_vocab: Fn;
  llama_model_n_ctx_train: Fn;
  llama_model_n_embd: Fn;
  llama_model_n_layer: Fn;
  llama_model_n_head: Fn;
  llama_model_n_head_kv: Fn;
  llama_model_meta_val_str: Fn;
  llama_model_chat_template: Fn;
  llama_model_desc: Fn;
  llama_model_has_encoder: Fn;
  llama_model_is_recurrent: Fn;
  llama_model_is_hybrid: Fn;
  llama_n_ctx: Fn;
  llama_n_threads: Fn;
  llama_n_batch: Fn;
  llama_n_seq_max: Fn;
  llama_vocab_n_tokens: Fn;
  llama_vocab_bos: Fn;
  llama_vocab_eos: Fn;
  llama_vocab_eot: Fn;
  llama_vocab_nl: Fn;
  llama_vocab_is_eog: Fn;
  llama_vocab_is_control: Fn;
  llama_vocab_get_add_bos: Fn;
  llama_tokenize: Fn;
  llama_token_to_piece: Fn;
  llama_detokenize: Fn;
  llama_chat_apply_template: Fn;
  llama_decode: Fn;
  llama_get_logits_ith: Fn;
  llama_get_memory: Fn;
  llama_memory_seq_rm: Fn;
  llama_memory_seq_pos_max: Fn;
  llama_memory_clear: Fn;
  llama_set_adapter_cvec: Fn;
  llama_state_seq_get_size: Fn;
  llama_state_seq_get_data: Fn;
  llama_log_set: Fn;
  ggml_backend_tensor_get: Fn;
  ggml_backend_tensor_set: Fn;
  ggml_backend_load_all_from_path: Fn;
  ggml_backend_dev_count: Fn;
  ggml_backend_dev_get: Fn;
  ggml_backend_dev_type: Fn;
  ggml_backend_dev_name: Fn;
  ggml_is_contiguous: Fn;
}

export interface LoadedLibrary {
  api: LlamaApi;
  /** "cpu", or the GPU kind whose device was actually registered. */
  backend: "cpu" | GpuKind;
  /** Names of the registered ggml devices, e.g. ["CPU"] or ["CUDA0", "CPU"]. */
  devices: string[];
  directory: string;
  /** The raw koffi handle of libllama (for the ABI guard's own test). */
  handle: LibraryHandle;
}

function declare(llama: LibraryHandle, ggmlBase: LibraryHandle, ggml: LibraryHandle): LlamaApi {
  const f = (lib: LibraryHandle, proto: string) => lib.func(proto);
  return {
    llama_backend_init: f(llama, "void llama_backend_init()"),
    llama_model_default_params: f(llama, "ruffian_llama_model_params llama_model_default_params()"),
    llama_context_default_params: f(
      llama,
      "ruffian_llama_context_params llama_context_default_params()",
    ),
    llama_model_load_from_file: f(
      llama,
      "void *llama_model_load_from_file(const char *path, ruffian_llama_model_params params)",
    ),
    llama_model_free: f(llama, "void llama_model_free(void *model)"),
    llama_init_from_model: f(
      llama,
      "void *llama_init_from_model(void *model, ruffian_llama_context_params params)",
    ),
    llama_free: f(llama, "void llama_free(void *ctx)"),
    llama_model_get_vocab: f(llama, "void *llama_model_get_vocab(void *model)"),
    llama_model_n_ctx_train: f(llama, "int32_t llama_model_n_ctx_train(void *model)"),
    llama_model_n_embd: f(llama, "int32_t llama_model_n_embd(void *model)"),
    llama_model_n_layer: f(llama, "int32_t llama_model_n_layer(void *model)"),
    llama_model_n_head: f(llama, "int32_t llama_model_n_head(void *model)"),
    llama_model_n_head_kv: f(llama, "int32_t llama_model_n_head_kv(void *model)"),
    llama_model_meta_val_str: f(
      llama,
      "int32_t llama_model_meta_val_str(void *model, const char *key, _Out_ uint8_t *buf, size_t size)",
    ),
    llama_model_chat_template: f(
      llama,
      "const char *llama_model_chat_template(void *model, const char *name)",
    ),
    llama_model_desc: f(
      llama,
      "int32_t llama_model_desc(void *model, _Out_ uint8_t *buf, size_t size)",
    ),
    llama_model_has_encoder: f(llama, "bool llama_model_has_encoder(void *model)"),
    llama_model_is_recurrent: f(llama, "bool llama_model_is_recurrent(void *model)"),
    llama_model_is_hybrid: f(llama, "bool llama_model_is_hybrid(void *model)"),
    llama_n_ctx: f(llama, "uint32_t llama_n_ctx(void *ctx)"),
    llama_n_threads: f(llama, "int32_t llama_n_threads(void *ctx)"),
    llama_n_batch: f(llama, "uint32_t llama_n_batch(void *ctx)"),
    llama_n_seq_max: f(llama, "uint32_t llama_n_seq_max(void *ctx)"),
    llama_vocab_n_tokens: f(llama, "int32_t llama_vocab_n_tokens(void *vocab)"),
    llama_vocab_bos: f(llama, "int32_t llama_vocab_bos(void *vocab)"),
    llama_vocab_eos: f(llama, "int32_t llama_vocab_eos(void *vocab)"),
    llama_vocab_eot: f(llama, "int32_t llama_vocab_eot(void *vocab)"),
    llama_vocab_nl: f(llama, "int32_t llama_vocab_nl(void *vocab)"),
    llama_vocab_is_eog: f(llama, "bool llama_vocab_is_eog(void *vocab, int32_t token)"),
    llama_vocab_is_control: f(llama, "bool llama_vocab_is_control(void *vocab, int32_t token)"),
    llama_vocab_get_add_bos: f(llama, "bool llama_vocab_get_add_bos(void *vocab)"),
    llama_tokenize: f(
      llama,
      "int32_t llama_tokenize(void *vocab, const uint8_t *text, int32_t len, _Out_ int32_t *tokens, int32_t max, bool add_special, bool parse_special)",
    ),
    llama_token_to_piece: f(
      llama,
      "int32_t llama_token_to_piece(void *vocab, int32_t token, _Out_ uint8_t *buf, int32_t len, int32_t lstrip, bool special)",
    ),
    llama_detokenize: f(
      llama,
      "int32_t llama_detokenize(void *vocab, const int32_t *tokens, int32_t n, _Out_ uint8_t *text, int32_t max, bool remove_special, bool unparse_special)",
    ),
    llama_chat_apply_template: f(
      llama,
      "int32_t llama_chat_apply_template(const char *tmpl, const ruffian_llama_chat_message *chat, size_t n, bool add_ass, _Out_ uint8_t *buf, int32_t len)",
    ),
    llama_decode: f(llama, "int32_t llama_decode(void *ctx, ruffian_llama_batch batch)"),
    llama_get_logits_ith: f(llama, "void *llama_get_logits_ith(void *ctx, int32_t i)"),
    llama_get_memory: f(llama, "void *llama_get_memory(void *ctx)"),
    llama_memory_seq_rm: f(
      llama,
      "bool llama_memory_seq_rm(void *mem, int32_t seq, int32_t p0, int32_t p1)",
    ),
    llama_memory_seq_pos_max: f(llama, "int32_t llama_memory_seq_pos_max(void *mem, int32_t seq)"),
    llama_memory_clear: f(llama, "void llama_memory_clear(void *mem, bool data)"),
    llama_set_adapter_cvec: f(
      llama,
      "int32_t llama_set_adapter_cvec(void *ctx, const float *data, size_t len, int32_t n_embd, int32_t il_start, int32_t il_end)",
    ),
    llama_state_seq_get_size: f(llama, "size_t llama_state_seq_get_size(void *ctx, int32_t seq)"),
    llama_state_seq_get_data: f(
      llama,
      "size_t llama_state_seq_get_data(void *ctx, _Out_ uint8_t *dst, size_t size, int32_t seq)",
    ),
    llama_log_set: f(llama, "void llama_log_set(void *cb, void *user_data)"),
    ggml_backend_tensor_get: f(
      ggmlBase,
      "void ggml_backend_tensor_get(void *t, _Out_ void *data, size_t offset, size_t size)",
    ),
    ggml_backend_tensor_set: f(
      ggmlBase,
      "void ggml_backend_tensor_set(void *t, const void *data, size_t offset, size_t size)",
    ),
    ggml_backend_load_all_from_path: f(
      ggml,
      "void ggml_backend_load_all_from_path(const char *dir)",
    ),
    ggml_backend_dev_count: f(ggml, "size_t ggml_backend_dev_count()"),
    ggml_backend_dev_get: f(ggml, "void *ggml_backend_dev_get(size_t i)"),
    ggml_backend_dev_type: f(ggml, "int32_t ggml_backend_dev_type(void *dev)"),
    ggml_backend_dev_name: f(ggml, "const char *ggml_backend_dev_name(void *dev)"),
    ggml_is_contiguous: f(ggmlBase, "bool ggml_is_contiguous(void *t)"),
  };
}

// llama.cpp logs through one global callback; keeping the recent lines lets load failures name
// their cause ("unknown model architecture ...") instead of a bare NULL.
const recentLog: string[] = [];
let logCallback: bigint | undefined;

function installLogCapture(api: LlamaApi): void {
  if (logCallback !== undefined) return;
  const proto = koffi.proto("void ruffian_ggml_log_cb(int level, const char *text, void *ud)");
  const echo = process.env.RUFFIAN_LLAMA_LOG === "1";
  logCallback = koffi.register((level: number, text: string | null) => {
    try {
      if (!text) return;
      if (echo) process.stderr.write(text);
      // Levels: 2 info, 3 warn, 4 error, 5 continuation of the previous line.
      if (level >= 3) {
        recentLog.push(text);
        if (recentLog.length > 20) recentLog.shift();
      }
    } catch {
      // A throw must never cross back into C.
    }
  }, koffi.pointer(proto));
  api.llama_log_set(logCallback, null);
  // The callback belongs to this thread: once a worker thread is gone, llama.cpp calling it
  // from another thread's engine aborts the process (koffi's call into a dead thread). The
  // worker hands logging back to llama.cpp's default on its way out.
  if (!isMainThread) process.once("exit", () => api.llama_log_set(null, null));
}

/**
 * Points llama.cpp's one log callback at this thread's again. With engines on several threads
 * (a server's decode worker beside another), the callback is whichever thread set it last, or
 * llama.cpp's default (stderr) once that thread is gone: a thread about to load or free a model
 * takes it back, so that what that logs is captured, not printed.
 */
export function claimLlamaLog(api: LlamaApi): void {
  if (logCallback !== undefined) api.llama_log_set(logCallback, null);
}

/** Warnings and errors llama.cpp logged since the last call, joined into one line. */
export function takeRecentLog(): string {
  const text = recentLog
    .join("")
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .join("; ");
  recentLog.length = 0;
  return text;
}

let loaded: Promise<LoadedLibrary> | undefined;
let loadedChoice: DeviceChoice | undefined;

/**
 * Loads libllama once per process. The first choice wins: two copies of ggml from different
 * packages in one process would share sonames and mix symbols.
 */
export function loadLlamaLibrary(device: DeviceChoice = "auto"): Promise<LoadedLibrary> {
  if (loaded) {
    if (loadedChoice !== device && device !== "auto" && loadedChoice !== "auto")
      return loaded.then((lib) => {
        if (lib.backend !== device && device !== "cpu")
          throw new LibraryLoadError(
            `llama.cpp is already loaded with the ${lib.backend} backend in this process; ` +
              `cannot switch to ${device}`,
          );
        return lib;
      });
    return loaded;
  }
  loadedChoice = device;
  loaded = loadOnce(device).catch((err) => {
    loaded = undefined;
    throw err;
  });
  return loaded;
}

async function loadOnce(device: DeviceChoice): Promise<LoadedLibrary> {
  const wanted: GpuKind[] =
    device === "cpu" ? [] : device === "auto" ? await autoGpuKinds() : [device];
  const candidates: { kind: GpuKind | "cpu"; dir: string }[] = [];
  for (const kind of wanted) {
    const dir = binsDirectory(packageName(kind));
    if (dir) candidates.push({ kind, dir });
    else if (device !== "auto")
      throw await unavailable(
        device,
        `@node-llama-cpp/${packageName(kind) || `<${kind}>`} is not installed`,
      );
  }
  const cpuDir = binsDirectory(packageName("cpu"));
  if (cpuDir) candidates.push({ kind: "cpu", dir: cpuDir });
  const chosen = candidates[0];
  if (!chosen)
    throw new LibraryLoadError(
      `no prebuilt llama.cpp for ${platformTag()}-${process.arch}: ` +
        `@node-llama-cpp/${packageName("cpu")} is not installed (reinstall node-llama-cpp without --omit=optional)`,
    );

  const dir = chosen.dir;
  let api: LlamaApi;
  let llama: LibraryHandle;
  try {
    const ggmlBase = koffi.load(findLibrary(dir, /^(lib)?ggml-base\.(so|dylib|dll)$/));
    const ggml = koffi.load(
      findLibrary(
        dir,
        /^(lib)?ggml(\.[a-z]+)?\.v?[\d.]+\.(so|dylib|dll)$|^(lib)?ggml\.(so|dylib|dll)$/,
      ),
    );
    llama = koffi.load(
      findLibrary(
        dir,
        /^(lib)?llama(\.[a-z]+)?\.v?[\d.]+\.(so|dylib|dll)$|^(lib)?llama\.(so|dylib|dll)$/,
      ),
    );
    api = declare(llama, ggmlBase, ggml);
  } catch (err) {
    if (err instanceof LibraryLoadError) throw err;
    throw new LibraryLoadError(`cannot load llama.cpp from ${dir}: ${(err as Error).message}`);
  }
  verifyAbi(llama, undefined, `libllama in ${dir}`);
  installLogCapture(api);

  // node-llama-cpp may already have registered the backends in this process (same library
  // files): loading them twice would list every device twice.
  if (Number(api.ggml_backend_dev_count()) === 0) api.ggml_backend_load_all_from_path(dir);
  api.llama_backend_init();
  const devices: string[] = [];
  let hasGpu = false;
  const count = Number(api.ggml_backend_dev_count());
  for (let i = 0; i < count; i++) {
    const dev = api.ggml_backend_dev_get(i);
    devices.push(String(api.ggml_backend_dev_name(dev)));
    const type = api.ggml_backend_dev_type(dev);
    if (type === GGML_BACKEND_DEVICE_TYPE_GPU || type === GGML_BACKEND_DEVICE_TYPE_IGPU)
      hasGpu = true;
  }
  if (count === 0)
    throw new LibraryLoadError(
      `no ggml backend could be loaded from ${dir} (this CPU may be unsupported by the prebuilt variants)`,
    );
  // An explicitly requested GPU backend that registered no GPU device would silently run on the CPU.
  if (device !== "auto" && device !== "cpu" && !hasGpu)
    throw await unavailable(device, `llama.cpp's ${device} backend found no ${device} device`);
  // The decode loop's vocabulary passes borrow the CPU backend's vector kernels (the variant
  // ggml just loaded for this CPU) when they pass their self-check.
  bindGgmlCpuKernels();
  return {
    api,
    backend: chosen.kind !== "cpu" && hasGpu ? chosen.kind : "cpu",
    devices,
    directory: dir,
    handle: llama,
  };
}

export { AbiMismatchError };
