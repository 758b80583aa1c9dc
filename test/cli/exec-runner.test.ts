// `ruffian exec FILE.c` as a C runner (like `tcc -run`): a program with main prints only what it
// prints and exits with main's return value or exit(n); snippets keep printing their value.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { packageRoot } from "../../src/paths.js";

const bin = join(packageRoot, "bin", "ruffian.js");

function ruffian(...args: string[]) {
  const r = spawnSync(process.execPath, [bin, ...args], { encoding: "utf8", cwd: "/" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function withProgram(source: string, fn: (file: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), "ruffian-exec-"));
  try {
    const file = join(dir, "prog.c");
    writeFileSync(file, source);
    fn(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("a program whose main returns 6 exits with 6 and prints nothing", () => {
  withProgram("int main(void) { return 6; }\n", (file) => {
    const r = ruffian("exec", file);
    assert.equal(r.code, 6, r.stderr);
    assert.equal(r.stdout, "");
  });
});

test("exit(n) sets the status; only the program's own output is printed", () => {
  withProgram(
    '#include <stdio.h>\n#include <stdlib.h>\nint main() { printf("partial"); exit(3); }\n',
    (file) => {
      const r = ruffian("exec", file);
      assert.equal(r.code, 3, r.stderr);
      assert.equal(r.stdout, "partial");
    },
  );
});

test("main gets argc 1 and argv[0] naming the program", () => {
  withProgram(
    '#include <stdio.h>\nint main(int argc, char **argv) {\n  printf("%d %s %d\\n", argc, argv[0], argv[1] == 0);\n  return 0;\n}\n',
    (file) => {
      const r = ruffian("exec", file);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `1 ${file} 1\n`);
    },
  );
});

test("a status above 255 is reported modulo 256, as a process exit status is", () => {
  const r = ruffian("exec", "-e", "int main() { return 258; }");
  assert.equal(r.code, 2);
  assert.equal(r.stdout, "");
});

test("snippets without main still print their value and exit 0", () => {
  const r = ruffian("exec", "-e", "847*293");
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "248171\n");
});
