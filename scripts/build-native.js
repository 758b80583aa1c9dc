// Builds Ruffian's native vocabulary kernels (src/native/vocab-kernels.c) into dist/src/native/,
// beside the module that loads them (src/native/native-kernels.ts): on x86-64 an AVX-512 and an
// AVX2 + FMA variant (the loader picks by the CPU's flags; a plain x86-64 build, 4-wide SSE2
// without FMA, measured slower than the WebAssembly kernels, so there is none), elsewhere one
// for the host (NEON on arm64).
// Run by `npm run build` after tsc. Without a C compiler (or when it fails) it prints one line
// and exits 0: the decode loop then uses llama.cpp's exp kernel or WebAssembly, as before.
// CC chooses the compiler (default cc); no -ffast-math: the kernels' NaN/Infinity rules matter.
import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const source = join(root, "src", "native", "vocab-kernels.c");
const outDir = join(root, "dist", "src", "native");
const cc = process.env.CC || "cc";
const ext = process.platform === "darwin" ? "dylib" : process.platform === "win32" ? "dll" : "so";

/** Variant name → extra flags; the names are the loader's (native-kernels.ts). */
const variants =
  process.arch === "x64"
    ? { avx512: ["-mavx512f", "-mavx2", "-mfma"], avx2: ["-mavx2", "-mfma"] }
    : { baseline: [] };

mkdirSync(outDir, { recursive: true });
const built = [];
for (const [name, flags] of Object.entries(variants)) {
  const out = join(outDir, `libruffian-vocab-${name}.${ext}`);
  const args = ["-O3", "-shared", "-fPIC", "-std=gnu11", "-fvisibility=default", ...flags];
  const run = spawnSync(cc, [...args, "-o", out, source], { encoding: "utf8" });
  if (run.error) {
    // No compiler at all: one line for every variant.
    console.log(
      `build-native: no native vocabulary kernels (${cc}: ${run.error.message}); the decode loop uses llama.cpp's or WebAssembly kernels`,
    );
    break;
  }
  if (run.status !== 0) {
    const why = (run.stderr || "").trim().split("\n")[0] || `exit ${run.status}`;
    console.log(
      `build-native: ${name} kernels not built (${cc}: ${why}); the decode loop uses llama.cpp's or WebAssembly kernels`,
    );
    continue;
  }
  built.push(name);
}
if (built.length > 0) console.log(`build-native: vocabulary kernels built (${built.join(", ")})`);
