// Sandbox limits: profiles and per-limit overrides for instructions, wall clock, memory,
// output and call depth; the VM never throws and never reaches the host.
import { test } from "node:test";
import assert from "node:assert/strict";
import { DEFAULT_PROFILE, PROFILES, runC, VmSession } from "../../src/vm/index.js";

test("profiles grow from tiny to huge and the default is one of them", () => {
  const order = ["tiny", "small", "medium", "large", "huge"] as const;
  for (let i = 1; i < order.length; i++) {
    const a = PROFILES[order[i - 1]!];
    const b = PROFILES[order[i]!];
    assert.ok(
      b.memoryBytes > a.memoryBytes &&
        b.maxInstructions > a.maxInstructions &&
        b.stackBytes > a.stackBytes,
    );
  }
  assert.ok(order.includes(DEFAULT_PROFILE));
  assert.throws(() => new VmSession({ limits: { memoryBytes: -1 } }), /memoryBytes/);
});

test("the instruction budget stops runaway loops and recursion-free spins", () => {
  const r = runC("long i = 0; while (1) i++;", { profile: "tiny" });
  assert.ok(!r.ok);
  assert.match(r.error.message, /^instruction limit exceeded \(1000000 instructions; raise/);
  assert.ok(r.stats.instructions >= PROFILES.tiny.maxInstructions);
  const d = runC("int i = 0; do { i++; } while (i > 0 || 1);", {
    limits: { maxInstructions: 5000 },
  });
  assert.ok(!d.ok && d.error.message.startsWith("instruction limit exceeded"));
  const f = runC("int f(int n) { return n == 0 ? 0 : f(n - 1) + f(n - 1); } return f(40);", {
    limits: { maxInstructions: 100000 },
  });
  assert.ok(!f.ok && f.error.message.startsWith("instruction limit exceeded"));
});

test("call depth is bounded by maxCallDepth", () => {
  const src = "int down(int n) { return n == 0 ? 0 : 1 + down(n - 1); }";
  assert.ok(runC(`${src} return down(40);`, { limits: { maxCallDepth: 50 } }).ok);
  const r = runC(`${src} return down(60);`, { limits: { maxCallDepth: 50 } });
  assert.ok(!r.ok);
  assert.equal(
    r.error.message,
    "stack overflow (call depth limit 50; raise maxCallDepth or use a larger profile)",
  );
  assert.deepEqual([r.error.line, r.error.column], [1, 5]);
});

test("memory limit: malloc beyond it returns NULL, and small profiles hold less", () => {
  assert.equal(
    (runC("return malloc(3 * 1024 * 1024) == 0;", { profile: "tiny" }) as { text: string }).text,
    "1",
  );
  const r = runC("int n = 0; while (malloc(1 << 20)) n++; return n > 20 && n < 32;", {
    profile: "small",
  });
  assert.ok(r.ok && r.text === "1", r.ok ? r.text : r.error.message);
});

test("output is capped and the truncation is reported", () => {
  const r = runC('for (int i = 0; i < 10000; i++) printf("0123456789"); return 0;', {
    limits: { maxOutputBytes: 1000 },
  });
  assert.ok(r.ok);
  assert.equal(r.stdout.length, 1000);
  assert.equal(r.outputTruncated, true);
  const small = runC('printf("hi"); return 0;');
  assert.ok(small.ok && small.outputTruncated === false);
});

test("there is no way to reach the host: no files, processes or environment", () => {
  for (const fn of ['system("ls")', 'getenv("HOME")', "fork()"]) {
    const r = runC(`int main() { ${fn}; return 0; }`);
    assert.ok(!r.ok);
    assert.equal(r.error.kind, "type");
    assert.match(r.error.message, /^unknown function/);
  }
  // fopen opens the VM's own in-memory files: a host path is just a name that does not exist.
  const r = runC('#include <stdio.h>\nint main() { return fopen("/etc/passwd", "r") == NULL; }');
  assert.ok(r.ok && r.exitCode === 1, r.ok ? r.text : r.error.message);
});

test("printing before a failure is kept in the failure's stdout", () => {
  const r = runC('printf("before "); int z = 0; return 1 / z;');
  assert.ok(!r.ok);
  assert.equal(r.stdout, "before ");
});

test("traps inside wasm report the source position of the faulting operation", () => {
  const fp = runC("int (*f)(int) = 0;\nint main() { return f(1); }");
  assert.ok(!fp.ok);
  assert.equal(fp.error.message, "call through an invalid function pointer");
  assert.equal(fp.error.line, 2);
  const ov = runC("int x = -2147483647 - 1, y = -1;\nreturn x / y;");
  assert.ok(!ov.ok);
  assert.deepEqual(ov.error, {
    kind: "runtime",
    message: "integer overflow in division",
    line: 2,
    column: 10,
  });
  const str = runC('char *s = (char *)0x7fffff00;\nprintf("%s", s);');
  assert.ok(!str.ok);
  assert.equal(str.error.message, "memory access out of bounds");
  assert.equal(str.error.line, 2);
});

test("exit() ends the program with its status", () => {
  const r = runC('printf("x"); exit(3); printf("y"); return 0;');
  assert.ok(r.ok);
  assert.equal(r.stdout, "x");
  assert.deepEqual(r.value, { ctype: "int", value: 3 });
});
