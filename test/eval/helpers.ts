// Shared by the evaluation tests: runs the `ruffian` CLI as a user would, and a scratch directory.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { packageRoot } from "../../src/paths.js";

const bin = join(packageRoot, "bin", "ruffian.js");

export function ruffian(...args: string[]) {
  const r = spawnSync(process.execPath, [bin, ...args], { encoding: "utf8", cwd: "/" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Runs `body` with a fresh temporary directory, removed afterwards. */
export function withTempDir<T>(body: (dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), "ruffian-eval-"));
  try {
    return body(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
