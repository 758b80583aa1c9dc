// Call depth comparable to an 8 MB native stack: gcc -O0 recurses 261,921 deep into this
// function there, and the default profile allows 262,144 calls. runC and `ruffian exec` get
// there on a big-stack worker; deeper ends in a positioned error that names the limit.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { packageRoot } from "../../src/paths.js";
import { PROFILES, VmSession, runC } from "../../src/vm/index.js";

const program = (n: number): string =>
  `int f(int n){return n?1+f(n-1):0;}\nint main(){ printf("%d\\n", f(${n})); return 0; }\n`;

const DEPTH_LIMIT =
  /^stack overflow \(call depth limit 262144; raise maxCallDepth or use a larger profile/;

test("runC recurses 250,000 deep, and one past maxCallDepth is a positioned limit error", () => {
  assert.equal(PROFILES.medium.maxCallDepth, 262_144);
  const ok = runC(program(250_000));
  assert.ok(ok.ok, ok.ok ? "" : ok.error.message);
  assert.equal(ok.stdout, "250000\n");
  const deeper = runC(program(262_144));
  assert.ok(!deeper.ok);
  assert.match(deeper.error.message, DEPTH_LIMIT);
  assert.equal(deeper.error.kind, "limit");
  assert.deepEqual([deeper.error.line, deeper.error.column], [1, 5]);
  const large = runC(program(1_000_000), { profile: "large" });
  assert.ok(large.ok && large.stdout === "1000000\n", large.ok ? "" : large.error.message);
});

test("ruffian exec runs a 100,000-deep recursion and reports a too-deep one at file:line:col", () => {
  const dir = mkdtempSync(join(tmpdir(), "ruffian-depth-"));
  const run = (n: number) => {
    const file = join(dir, `depth${n}.c`);
    writeFileSync(file, program(n));
    const r = spawnSync(process.execPath, [join(packageRoot, "bin", "ruffian.js"), "exec", file], {
      encoding: "utf8",
    });
    return { file, code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const ok = run(100_000);
  assert.equal(ok.stderr, "");
  assert.equal(ok.stdout, "100000\n");
  assert.equal(ok.code, 0);
  const deep = run(10_000_000);
  assert.equal(deep.code, 1);
  assert.ok(deep.stderr.startsWith(`${deep.file}:1:5: stack overflow (call depth limit 262144`));
  assert.match(deep.stderr, /use a larger profile/);
});

test("a session runs on the calling thread: past its native stack, a positioned error says so", () => {
  const session = new VmSession();
  const r = session.run(program(1_000_000));
  assert.ok(!r.ok);
  assert.match(
    r.error.message,
    /^stack overflow \(the host's native stack ran out before the call depth reached maxCallDepth 262144; runC and ruffian exec rerun/,
  );
  assert.deepEqual([r.error.line, r.error.column], [1, 28]);
  // The session survives and keeps its definitions.
  const again = session.run("f(1000)");
  assert.ok(again.ok && again.text === "1000", again.ok ? again.text : again.error.message);
});
