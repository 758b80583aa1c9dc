// VmSession: REPL semantics across blocks (functions, globals, memory[] persist), call() by
// name as hooks use it, and recovery after failed blocks.
import { test } from "node:test";
import assert from "node:assert/strict";
import { VmSession, MEMORY_INTS, type VmOutcome } from "../../src/vm/index.js";

function textOf(r: VmOutcome): string {
  if (!r.ok)
    assert.fail(`${r.error.kind}: ${r.error.message} at ${r.error.line}:${r.error.column}`);
  return r.text;
}

test("functions defined in one block are callable from later blocks", () => {
  const s = new VmSession();
  textOf(s.run("int sq(int x) { return x * x; }"));
  assert.ok(s.hasFunction("sq"));
  assert.equal(textOf(s.run("return sq(7);")), "49");
  textOf(s.run("int quad(int x) { return sq(sq(x)); }"));
  assert.equal(textOf(s.run("quad(3)")), "81");
});

test("globals keep their values from block to block", () => {
  const s = new VmSession();
  textOf(s.run('int count = 0; double total = 0.5; char name[16] = "abc";'));
  assert.equal(textOf(s.run("count += 5; return count;")), "5");
  assert.equal(textOf(s.run("count += 5; total *= 4; return count;")), "10");
  assert.equal(textOf(s.run("return total;")), "2");
  assert.equal(textOf(s.run("name[0] = 'x'; printf(\"%s\", name);")), "xbc");
  assert.equal(textOf(s.run("int *p = malloc(40); p[9] = 99; return 0;")), "0");
  assert.equal(textOf(s.run("return p[9];")), "99");
});

test("memory[] is shared between C code and the host and persists", () => {
  const s = new VmSession();
  assert.equal(s.memory.length, MEMORY_INTS);
  textOf(s.run("memory[3] = 42;"));
  assert.equal(s.memory[3], 42);
  s.memory[4] = 7;
  assert.equal(textOf(s.run("return memory[4] + memory[3];")), "49");
  textOf(s.run("int big[100000]; big[99999] = 1;"));
  assert.equal(s.memory[3], 42);
});

test("call() runs a function by name with arguments, like a hook before each token", () => {
  const s = new VmSession();
  textOf(
    s.run(
      "int on_token(int step) { memory[0] += step; return step * 2; } long twice(long x) { return 2 * x; } double half(double x) { return x / 2; }",
    ),
  );
  for (let step = 1; step <= 10; step++) {
    const r = s.call("on_token", [step]);
    assert.ok(r.ok);
    assert.deepEqual(r.value, { ctype: "int", value: step * 2 });
  }
  assert.equal(s.memory[0], 55);
  const big = s.call("twice", [10n ** 12n]);
  assert.ok(big.ok);
  assert.equal(big.value.value, 2n * 10n ** 12n);
  const h = s.call("half", [3]);
  assert.ok(h.ok && h.value.value === 1.5);
  const missing = s.call("nope", []);
  assert.ok(!missing.ok);
  assert.equal(missing.error.message, "unknown function 'nope'");
  const wrong = s.call("twice", []);
  assert.ok(!wrong.ok);
  assert.match(wrong.error.message, /takes 1 argument/);
});

test("call() sees redefinitions and global changes made by later blocks", () => {
  const s = new VmSession();
  textOf(s.run("int k = 1; int f(int x) { return x + k; }"));
  assert.equal((s.call("f", [1]) as { value: { value: number } }).value.value, 2);
  textOf(s.run("k = 10;"));
  assert.equal((s.call("f", [1]) as { value: { value: number } }).value.value, 11);
  textOf(s.run("int f(int x) { return x * 100; }"));
  assert.equal((s.call("f", [2]) as { value: { value: number } }).value.value, 200);
});

test("a failing block leaves the session usable and defines nothing", () => {
  const s = new VmSession();
  textOf(s.run("int base = 7;"));
  const bad = s.run("int broken(int x) { return x + ; }");
  assert.ok(!bad.ok);
  assert.ok(!s.hasFunction("broken"));
  const crash = s.run("int z = 0; return base / z;");
  assert.ok(!crash.ok && crash.error.message === "division by zero");
  const loop = new VmSession({ limits: { maxInstructions: 100000 } });
  assert.ok(!loop.run("while (1) {}").ok);
  assert.equal(textOf(loop.run("return 5;")), "5");
  assert.equal(textOf(s.run("return base * 6;")), "42");
});

test("library functions are not reported as user functions", () => {
  const s = new VmSession();
  assert.ok(!s.hasFunction("strlen"));
  assert.ok(!s.hasFunction("printf"));
  textOf(s.run("int strlen2(char *s) { return strlen(s) * 2; }"));
  assert.ok(s.hasFunction("strlen2"));
});

test("a disposed session's memory goes to the next session of its profile, zeroed", () => {
  const a = new VmSession({ profile: "tiny" });
  const at = textOf(a.run("memory[3] = 42; int *p = malloc(40); p[9] = 99; return (int)p;"));
  // A view of a's whole memory, kept past its end (nothing in the runtime keeps one).
  const raw = new Int32Array(a.memory.buffer);
  a.dispose();
  assert.throws(() => a.run("1"), /disposed/);
  assert.throws(() => a.memory, /disposed/);
  const b = new VmSession({ profile: "tiny" });
  assert.equal(b.memory[3], 0);
  // The same allocation in b lands where a's was, and reads zero there.
  assert.equal(textOf(b.run("int *q = malloc(40); return (int)q;")), at);
  assert.equal(textOf(b.run("return q[9];")), "0");
  // b runs in a's memory.
  textOf(b.run("memory[5] = 77;"));
  assert.equal(raw[b.memory.byteOffset / 4 + 5], 77);
  b.dispose();
});

test("a disposed session whose memory grew does not hand it on", () => {
  const a = new VmSession({ profile: "tiny" });
  textOf(a.run("char *big = malloc(1000000); big[999999] = 1;"));
  const raw = new Int32Array(a.memory.buffer);
  const offset = a.memory.byteOffset / 4;
  a.dispose();
  const b = new VmSession({ profile: "tiny" });
  textOf(b.run("memory[5] = 77;"));
  assert.equal(raw[offset + 5], 0);
  assert.equal(b.memory[5], 77);
});
