// llama.cpp's own vector kernels, borrowed from the ggml CPU backend library already loaded
// in this process: `ggml_vec_soft_max_f32` computes exp(x − shift) over a vocabulary with
// 8-wide AVX2 (or NEON) and returns the sum in float64, about twice as fast here as the
// WebAssembly statistics kernel (4-wide SIMD). src/decode/vocab-kernels.ts uses it when it is
// bound and the project's own native kernels (src/native/) are not, and falls back to its
// WebAssembly kernels otherwise (no engine loaded, another platform, a self-check that failed).
//
// The symbol is internal to ggml (not in llama.h): its signature is checked by computing with
// it at bind time, never assumed. Written against node-llama-cpp 3.22.1 (llama.cpp's ggml
// 0.5.0): `ggml_float ggml_vec_soft_max_f32(const int n, float *y, const float *x, float max)`
// with ggml_float = double.
import koffi from "koffi";
import { readFileSync } from "node:fs";

export interface GgmlCpuKernels {
  /** The ggml CPU library the kernels come from (the variant ggml chose for this CPU). */
  readonly library: string;
  /** y[i] = exp(x[i] − shift) for i < n; returns Σ y in float64. NaN in, NaN out; −Infinity
   * gives 0. The arrays are passed as pointers (no copy), so views of a WebAssembly memory work. */
  softMax(n: number, y: Float32Array, x: Float32Array, shift: number): number;
}

/** The ggml CPU backend's file name: libggml-cpu.so, or a variant (libggml-cpu-haswell.so). */
const CPU_LIBRARY = /(^|\/)(lib)?ggml-cpu(-[\w-]+)?\.(so|dylib|dll)$/;

let bound: GgmlCpuKernels | undefined;
/** Why nothing is bound (for the benchmark and diagnostics). */
let unboundReason = "no llama.cpp library has been loaded in this process";
/** RUFFIAN_GGML_KERNELS=0 keeps the WebAssembly kernels (to compare, or to rule these out). */
let enabled = process.env.RUFFIAN_GGML_KERNELS !== "0";

/** The bound kernels, or undefined when there are none (or they are switched off). */
export function ggmlCpuKernels(): GgmlCpuKernels | undefined {
  return enabled ? bound : undefined;
}

/** Switches the native kernels off (or back on), for benchmarks and tests that compare both
 * paths in one process. */
export function setGgmlCpuKernelsEnabled(on: boolean): void {
  enabled = on;
}

/** What the kernels are bound to, or why not. */
export function ggmlCpuKernelsStatus(): string {
  return bound
    ? `ggml CPU kernels from ${bound.library}`
    : `WebAssembly kernels (${unboundReason})`;
}

/** The ggml CPU library mapped into this process (Linux: /proc/self/maps), if any. */
function loadedCpuLibrary(): string | undefined {
  if (process.platform !== "linux") return undefined;
  let maps: string;
  try {
    maps = readFileSync("/proc/self/maps", "utf8");
  } catch {
    return undefined;
  }
  for (const line of maps.split("\n")) {
    const path = line.slice(line.indexOf("/"));
    if (line.includes("/") && CPU_LIBRARY.test(path)) return path;
  }
  return undefined;
}

/**
 * Binds the kernels of the ggml CPU library this process has loaded (call it after llama.cpp's
 * backends are loaded; again is cheap). Returns what was bound, or undefined, leaving the
 * WebAssembly kernels in use, when no such library is loaded, the symbol is missing, or it
 * does not compute what its signature promises.
 */
export function bindGgmlCpuKernels(): GgmlCpuKernels | undefined {
  if (bound) return bound;
  const library = loadedCpuLibrary();
  if (!library) {
    unboundReason = "no ggml CPU library is loaded in this process";
    return undefined;
  }
  try {
    // dlopen of a library already loaded returns the same mapping.
    const lib = koffi.load(library);
    const softMax = lib.func(
      "double ggml_vec_soft_max_f32(int n, float *y, const float *x, float max)",
    ) as (n: number, y: Float32Array, x: Float32Array, max: number) => number;
    const failure = checkSoftMax(softMax);
    if (failure) {
      unboundReason = `ggml_vec_soft_max_f32 in ${library} failed its self-check: ${failure}`;
      return undefined;
    }
    bound = { library, softMax };
    return bound;
  } catch (err) {
    unboundReason = `cannot bind ggml_vec_soft_max_f32 in ${library}: ${(err as Error).message}`;
    return undefined;
  }
}

/** Values the self-check runs: every lane position of several vectors plus a scalar tail, from
 * the shift down to 100 nats below it (the underflow path included), −Infinity among them. */
const CHECK_VALUES = 389;
/** Floats after the checked ones that must come back untouched. */
const GUARD = 16;

/**
 * Computes exp over a few hundred values with a soft-max kernel and compares every weight and
 * the sum with float64: a changed signature (argument order, a float sum, another meaning)
 * gives garbage, which this catches; returns what failed, or undefined when it computes what
 * GgmlCpuKernels.softMax promises.
 */
export function checkSoftMax(softMax: GgmlCpuKernels["softMax"]): string | undefined {
  const shift = 3.25;
  const x = new Float32Array(CHECK_VALUES + GUARD);
  for (let i = 0; i < CHECK_VALUES; i++)
    x[i] = shift - ((i * 37) % CHECK_VALUES) * (100 / CHECK_VALUES);
  x[5] = -Infinity;
  x[200] = shift; // the largest weight is exactly 1
  const y = new Float32Array(CHECK_VALUES + GUARD).fill(7);
  const sum = softMax(CHECK_VALUES, y, x, shift);
  let want = 0;
  for (let i = 0; i < CHECK_VALUES; i++) {
    const e = Math.exp(Math.fround(x[i]! - shift));
    want += e;
    // Weights 87 nats down and below may be flushed to zero or denormal: any value that small.
    const ok = e < 1e-37 ? y[i]! >= 0 && y[i]! < 2e-37 : Math.abs(y[i]! - e) <= 2e-6 * e;
    if (!ok) return `exp(${x[i]} − ${shift}) gave ${y[i]}, expected ${e}`;
  }
  for (let i = CHECK_VALUES; i < y.length; i++)
    if (y[i] !== 7) return `it wrote past the ${CHECK_VALUES} values asked for`;
  if (!(Math.abs(sum - want) <= 1e-6 * want)) return `its sum ${sum} should be ${want}`;
  return undefined;
}
