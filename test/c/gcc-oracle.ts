// gcc as the reference C implementation for differential tests: compiles a program once into a
// temporary directory and reports its stdout and exit status. Absent gcc, callers skip.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface NativeRun {
  stdout: string;
  exit: number;
}

let available: boolean | undefined;

/** True when `gcc --version` runs; checked once per process. */
export function gccAvailable(): boolean {
  if (available === undefined) {
    const probe = spawnSync("gcc", ["--version"], { encoding: "utf8" });
    available = probe.status === 0;
  }
  return available;
}

/** Compiles `source` with `gcc -O0 -w -lm` (the same flags as the fixtures' regenerate.sh) and
 * runs it. Output is read as latin1 so bytes round-trip exactly like the expected files. */
export function runWithGcc(source: string, name = "program"): NativeRun {
  const dir = mkdtempSync(join(tmpdir(), "ruffian-gcc-"));
  try {
    const src = join(dir, `${name}.c`);
    const bin = join(dir, name);
    writeFileSync(src, source);
    const compile = spawnSync("gcc", ["-O0", "-w", "-o", bin, src, "-lm"], { encoding: "utf8" });
    if (compile.status !== 0) throw new Error(`gcc rejected ${name}: ${compile.stderr}`);
    const run = spawnSync(bin, [], { encoding: "latin1", timeout: 120_000 });
    if (run.error) throw run.error;
    return { stdout: run.stdout, exit: run.status ?? -1 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
