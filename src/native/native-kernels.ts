// Ruffian's own native vocabulary kernels (vocab-kernels.c beside this file), loaded with koffi
// from dist/src/native/, where scripts/build-native.js puts them at `npm run build`. On x86-64
// the AVX-512 build is chosen where the CPU has it, else the AVX2 + FMA one where it has both
// (Linux: /proc/cpuinfo's flags), else none (WebAssembly's 4-wide kernels are as fast as a
// plain x86-64 build); other architectures get the host's build. Like llama.cpp's borrowed kernel (src/engine/llama/ggml-cpu-kernels.ts),
// each kernel is checked by computing with it at bind time, so a stale or miscompiled library
// is never used. src/decode/vocab-kernels.ts prefers these, then llama.cpp's exp kernel, then
// its WebAssembly ones. RUFFIAN_NATIVE_KERNELS=0 (or setNativeKernelsEnabled(false)) skips
// them, to compare the paths or rule these out; RUFFIAN_NATIVE_KERNELS=avx2 (or avx512) takes
// that build where the CPU can run it (to compare builds), and none, with the reason, where not.
import koffi from "koffi";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { checkSoftMax } from "../engine/llama/ggml-cpu-kernels.js";

export interface NativeVocabKernels {
  /** The library file bound. */
  readonly library: string;
  /** Which build: "avx512", "avx2" (AVX2 + FMA) or "baseline" (the host's, not x86-64). */
  readonly variant: string;
  /**
   * Block maxima and softmax statistics of `dst` (blocks·256 floats, those past n already
   * −Infinity), after copying src[0..n) into it unless src is dst: maxima[b] and, in sums,
   * Σe and Σe·d for block b (e = exp(d), d = x − the block's maximum; 85.5 nats down, NaN and
   * −Infinity weigh 0; a block 40 nats below the largest so far is skipped with zero sums).
   * Returns the largest logit. The outputs of the WebAssembly blockStats kernel.
   */
  blockStats(
    src: Float32Array,
    dst: Float32Array,
    n: number,
    blocks: number,
    maxima: Float32Array,
    sums: Float64Array,
  ): number;
  /** y[i] = exp(x[i] − shift) for i < n, returning Σy in float64; NaN, −Infinity and 87
   * nats down give 0, more than 88 nats up +Infinity. */
  softMax(n: number, y: Float32Array, x: Float32Array, shift: number): number;
  /** Σ w[i] over the i < n with x[i] ≥ threshold, in float64 (NaN is left out). */
  massAbove(x: Float32Array, w: Float32Array, n: number, threshold: number): number;
  /**
   * In one pass over x[0..n): every x < from becomes `value`; the i with from ≤ x[i] < to are
   * listed in ascending order, i to index, x[i] to bandX and w[i] to bandW; returns how many
   * (NaN is neither masked nor listed). Bound in the AVX-512 build only: in the AVX2 one it
   * measured no faster than the WebAssembly kernel, which has a lane bitmask instruction.
   */
  maskCollect?(
    x: Float32Array,
    w: Float32Array,
    n: number,
    from: number,
    to: number,
    value: number,
    index: Int32Array,
    bandW: Float32Array,
    bandX: Float32Array,
  ): number;
}

/** The kernels' block (BLOCK in vocab-kernels.c and simd-module.ts). */
const BLOCK = 256;

let bound: NativeVocabKernels | undefined;
let tried = false;
let unboundReason = "";
const setting = process.env.RUFFIAN_NATIVE_KERNELS ?? "";
let enabled = setting !== "0";
/** A build asked for by name in RUFFIAN_NATIVE_KERNELS. */
const forced = /^(avx512|avx2|baseline)$/.test(setting) ? setting : undefined;

/** The bound kernels (bound on first use), or undefined when they are missing, failed their
 * check, or are switched off. */
export function nativeKernels(): NativeVocabKernels | undefined {
  if (!enabled) return undefined;
  if (!tried) bind();
  return bound;
}

/** Switches the native kernels off (or back on), for tests and benchmarks that compare paths
 * in one process. */
export function setNativeKernelsEnabled(on: boolean): void {
  enabled = on;
}

/** What is bound, or why nothing is (for diagnostics, the benchmarks and tests). */
export function nativeKernelsStatus(): string {
  if (!tried) bind();
  if (!bound) return `no native vocabulary kernels (${unboundReason})`;
  return `native vocabulary kernels (${bound.variant}) from ${bound.library}${enabled ? "" : ", switched off"}`;
}

/** The x86-64 builds, best first, with the CPU flags each needs. */
const X64_BUILDS: ReadonlyArray<{ variant: string; needs: readonly string[] }> = [
  { variant: "avx512", needs: ["avx512f", "avx2", "fma"] },
  { variant: "avx2", needs: ["avx2", "fma"] },
];

/** The build this CPU runs best (or `wanted`, if it can run it), or why there is none: on
 * x86-64 by the flags /proc/cpuinfo lists (Linux only). A build the CPU cannot run would stop
 * the process at its first instruction, so a forced one is checked too. */
function variantForCpu(wanted?: string): { variant: string } | { none: string } {
  if (process.arch !== "x64") return { variant: wanted ?? "baseline" };
  if (process.platform !== "linux") return { none: "the CPU's features are read on Linux only" };
  let flags: Set<string>;
  try {
    const line = /^flags\s*:(.*)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1] ?? "";
    flags = new Set(line.trim().split(/\s+/));
  } catch (err) {
    return { none: `cannot read /proc/cpuinfo: ${(err as Error).message}` };
  }
  const runs = (b: (typeof X64_BUILDS)[number]) => b.needs.every((f) => flags.has(f));
  if (wanted !== undefined) {
    const build = X64_BUILDS.find((b) => b.variant === wanted);
    if (!build) return { none: `RUFFIAN_NATIVE_KERNELS=${wanted}: there is no such x86-64 build` };
    return runs(build)
      ? { variant: wanted }
      : { none: `RUFFIAN_NATIVE_KERNELS=${wanted}: this CPU lacks ${build.needs.join("/")}` };
  }
  const best = X64_BUILDS.find(runs);
  return best ? { variant: best.variant } : { none: "this CPU has no AVX2 and FMA" };
}

function libraryPath(variant: string): string {
  const ext = process.platform === "darwin" ? "dylib" : process.platform === "win32" ? "dll" : "so";
  return fileURLToPath(new URL(`./libruffian-vocab-${variant}.${ext}`, import.meta.url));
}

/** The library this process would bind (the build for this CPU, or the one
 * RUFFIAN_NATIVE_KERNELS names), or why none. */
export function nativeLibraryFor(): { variant: string; library: string } | { none: string } {
  const cpu = variantForCpu(forced);
  return "none" in cpu ? cpu : { variant: cpu.variant, library: libraryPath(cpu.variant) };
}

function bind(): void {
  tried = true;
  const plan = nativeLibraryFor();
  if ("none" in plan) {
    unboundReason = plan.none;
    return;
  }
  const { variant, library } = plan;
  if (!existsSync(library)) {
    unboundReason = `${library} is not built: no C compiler at \`npm run build\`?`;
    return;
  }
  try {
    const lib = koffi.load(library);
    const common: NativeVocabKernels = {
      library,
      variant,
      blockStats: lib.func(
        "float ruffian_block_stats(const float *src, float *dst, int32_t n, int32_t blocks, float *maxima, double *sums)",
      ),
      softMax: lib.func(
        "double ruffian_soft_max(int32_t n, float *y, const float *x, float shift)",
      ),
      massAbove: lib.func(
        "double ruffian_mass_above(const float *x, const float *w, int32_t n, float threshold)",
      ),
    };
    const kernels: NativeVocabKernels =
      variant !== "avx512"
        ? common
        : {
            ...common,
            maskCollect: lib.func(
              "int32_t ruffian_mask_collect(float *x, const float *w, int32_t n, float from, float to, float value, int32_t *index, float *band_w, float *band_x)",
            ),
          };
    const failure =
      checkSoftMax(kernels.softMax) ??
      checkBlockStats(kernels.blockStats) ??
      checkMassAbove(kernels.massAbove) ??
      (kernels.maskCollect && checkMaskCollect(kernels.maskCollect));
    if (failure) {
      unboundReason = `${library} failed its self-check: ${failure}`;
      return;
    }
    bound = kernels;
  } catch (err) {
    unboundReason = `cannot load ${library}: ${(err as Error).message}`;
  }
}

/**
 * Runs blockStats on three blocks and a part (values spread over 100 nats, NaN, −Infinity, a
 * block far below the rest, the padding) and compares the copy, every block maximum and every
 * block's sums with float64; returns what failed, or undefined.
 */
export function checkBlockStats(blockStats: NativeVocabKernels["blockStats"]): string | undefined {
  const n = 3 * BLOCK + 77;
  const blocks = 4;
  const src = new Float32Array(n);
  for (let i = 0; i < n; i++) src[i] = 2.5 - ((i * 37) % 389) * (100 / 389);
  src[5] = -Infinity;
  src[9] = NaN;
  src[300] = 7.75; // block 1's maximum
  for (let i = 2 * BLOCK; i < 3 * BLOCK; i++) src[i] = -60 - (i % 7); // 40+ nats below: skipped
  const dst = new Float32Array(blocks * BLOCK + 8).fill(-Infinity);
  dst[blocks * BLOCK] = 7; // a guard past the padding
  const maxima = new Float32Array(blocks);
  const sums = new Float64Array(2 * blocks);
  const max = blockStats(src, dst, n, blocks, maxima, sums);
  for (let i = 0; i < n; i++)
    if (!Object.is(dst[i], src[i])) return `the copy differs at ${i}: ${dst[i]} for ${src[i]}`;
  if (dst[blocks * BLOCK] !== 7) return "it wrote past the blocks asked for";
  let all = -Infinity;
  for (let b = 0; b < blocks; b++) {
    let m = -Infinity;
    for (let i = b * BLOCK; i < (b + 1) * BLOCK; i++) if (dst[i]! > m) m = dst[i]!;
    if (maxima[b] !== m) return `block ${b}'s maximum is ${maxima[b]}, not ${m}`;
    all = Math.max(all, m);
    let z = 0;
    let w = 0;
    if (m > all - 40) {
      for (let i = b * BLOCK; i < (b + 1) * BLOCK; i++) {
        const d = Math.fround(dst[i]! - m);
        if (!(d > -85.5)) continue;
        z += Math.exp(d);
        w += Math.exp(d) * d;
      }
    }
    const [gotZ, gotW] = [sums[2 * b]!, sums[2 * b + 1]!];
    if (!(Math.abs(gotZ - z) <= 1e-6 * z) || !(Math.abs(gotW - w) <= 1e-6 * Math.abs(w) + 1e-12))
      return `block ${b}'s sums are ${gotZ}, ${gotW}; expected ${z}, ${w}`;
  }
  if (max !== all) return `it returned ${max} as the largest, not ${all}`;
  return undefined;
}

/** Runs massAbove at a few thresholds over a few hundred values (NaN and the thresholds
 * themselves among them, a scalar tail) and compares with float64 sums; returns what failed, or undefined. */
export function checkMassAbove(massAbove: NativeVocabKernels["massAbove"]): string | undefined {
  const n = 2 * BLOCK + 45;
  const x = Float32Array.from({ length: n }, (_, i) => Math.sin(i * 0.7) * 5);
  const w = Float32Array.from({ length: n }, (_, i) => 1 + (i % 13) / 8);
  x[17] = NaN;
  // Logits equal to the thresholds count (at or above).
  [x[100], x[101], x[102]] = [-2, 0.5, 4.75];
  for (const threshold of [-Infinity, -2, 0.5, 4.75, 6]) {
    let want = 0;
    for (let i = 0; i < n; i++) if (x[i]! >= threshold) want += w[i]!;
    const got = massAbove(x, w, n, threshold);
    if (!(Math.abs(got - want) <= 1e-6 * want))
      return `mass above ${threshold}: ${got}, not ${want}`;
  }
  return undefined;
}

/** Runs maskCollect over a few hundred values (NaN among them, the bounds themselves, a
 * scalar tail) and compares the masked logits and the listed ids, logits and weights with a
 * plain loop; returns what failed, or undefined. */
export function checkMaskCollect(
  maskCollect: NonNullable<NativeVocabKernels["maskCollect"]>,
): string | undefined {
  const n = 2 * BLOCK + 45;
  const src = Float32Array.from({ length: n }, (_, i) => Math.sin(i * 0.7) * 5);
  src[17] = NaN;
  [src[100], src[101]] = [-1, 2]; // the bounds: −1 is listed, 2 is not
  const w = Float32Array.from({ length: n }, (_, i) => 1 + i / 64);
  const [from, to, value] = [-1, 2, -10000];
  const x = Float32Array.from(src);
  const index = new Int32Array(n + 1).fill(-7);
  const bandW = new Float32Array(n);
  const bandX = new Float32Array(n);
  const count = maskCollect(x, w, n, from, to, value, index, bandW, bandX);
  let want = 0;
  for (let i = 0; i < n; i++) {
    const v = src[i]!;
    const masked = v < from ? value : v;
    if (!Object.is(x[i], masked)) return `logit ${i} is ${x[i]} after the pass, not ${masked}`;
    if (!(v >= from && v < to)) continue;
    if (index[want] !== i || bandX[want] !== v || bandW[want] !== w[i])
      return `listed #${want} is ${index[want]} (${bandX[want]}, ${bandW[want]}), not ${i}`;
    want++;
  }
  if (count !== want) return `it listed ${count} tokens, not ${want}`;
  if (index[want] !== -7) return "it wrote past the tokens it listed";
  return undefined;
}
