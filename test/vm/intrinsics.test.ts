// IntrinsicRegistry: host functions bound by C signature, called from C, reading and writing
// VM memory; unregistered Ruffian intrinsics give a clear error.
import { test } from "node:test";
import assert from "node:assert/strict";
import { IntrinsicRegistry, KNOWN_INTRINSICS, VmSession, runC } from "../../src/vm/index.js";

test("a registered intrinsic is callable with its C signature", () => {
  const reg = new IntrinsicRegistry();
  const logits = [0.5, 2.5, -1, 7.25];
  reg.define("float logit_get(int)", (_ctx, i: number) => logits[i] ?? 0);
  reg.define("int logit_argmax(void)", () => 3);
  reg.define("void logit_set(int, float)", (_ctx, i: number, v: number) => {
    logits[i] = v;
  });
  const r = runC(
    'logit_set(0, 9.5f); printf("%d %.2f %.2f", logit_argmax(), logit_get(3), logit_get(0));',
    {
      intrinsics: reg,
    },
  );
  assert.ok(r.ok, r.ok ? "" : r.error.message);
  assert.equal(r.text, "3 7.25 9.50");
  assert.equal(logits[0], 9.5);
});

test("intrinsics read strings from and write strings into VM memory", () => {
  const reg = new IntrinsicRegistry();
  const hooks: Array<[string, number]> = [];
  reg.define("void hook_set(char*, int)", (ctx, name: number, steps: number) => {
    hooks.push([ctx.readString(name), steps]);
  });
  reg.define("int tok_str(int, char*)", (ctx, id: number, buf: number) =>
    ctx.writeString(buf, `tok${id}`, 64),
  );
  reg.define("int context_len(void)", () => 4);
  reg.define(
    "void attn_score(int, int, int, float*, int)",
    (ctx, _l: number, _h: number, _q: number, out: number, n: number) => {
      for (let i = 0; i < n; i++) ctx.writeFloat(out + 4 * i, i / 4);
    },
  );
  const r = runC(
    `int on_step(int s) { return s; }
     int main() {
       char *buf = malloc(64);
       int n = tok_str(17, buf);
       float sc[4];
       attn_score(0, 0, 3, sc, context_len());
       hook_set("on_step", 100);
       printf("%s %d %.2f", buf, n, sc[3]);
       return 0;
     }`,
    { intrinsics: reg },
  );
  assert.ok(r.ok, r.ok ? "" : r.error.message);
  assert.equal(r.text, "tok17 5 0.75");
  assert.deepEqual(hooks, [["on_step", 100]]);
});

test("the context reads and writes ints and checks bounds", () => {
  const reg = new IntrinsicRegistry();
  reg.define("int sum_ints(int*, int)", (ctx, p: number, n: number) => {
    let s = 0;
    for (let i = 0; i < n; i++) s += ctx.readInt(p + 4 * i);
    ctx.writeInt(p, -1);
    return s;
  });
  reg.define("int poke_far(void)", (ctx) => {
    ctx.writeInt(0x7ffffff0, 1);
    return 0;
  });
  const r = runC("int a[4] = {1, 2, 3, 4}; int s = sum_ints(a, 4); return s * 10 + a[0];", {
    intrinsics: reg,
  });
  assert.ok(r.ok && r.text === "99", r.ok ? r.text : r.error.message);
  const bad = runC("return poke_far();", { intrinsics: reg });
  assert.ok(!bad.ok);
  assert.equal(bad.error.kind, "runtime");
  assert.match(bad.error.message, /memory access out of bounds/);
});

test("an intrinsic that throws becomes a runtime error, not a host exception", () => {
  const reg = new IntrinsicRegistry();
  reg.define("int kv_layers(void)", () => {
    throw new Error("model went away");
  });
  const r = runC("return kv_layers();", { intrinsics: reg });
  assert.ok(!r.ok);
  assert.equal(r.error.kind, "runtime");
  assert.match(r.error.message, /model went away/);
});

test("every Ruffian intrinsic that is not registered gives the 'not available' error", () => {
  assert.equal(KNOWN_INTRINSICS.size, 41); // 34 from the seeds + 7 steering (docs/steering.md)
  for (const name of KNOWN_INTRINSICS) {
    const r = runC(`int main() {\n  ${name}(0);\n  return 0;\n}`);
    assert.ok(!r.ok);
    assert.equal(r.error.message, `intrinsic '${name}' is not available here (no model attached)`);
    assert.equal(r.error.line, 2);
    assert.equal(r.error.column, 3);
  }
});

test("intrinsics work in sessions and from call()", () => {
  const reg = new IntrinsicRegistry();
  let step = 0;
  reg.define("int hook_step(void)", () => step);
  const s = new VmSession({ intrinsics: reg });
  assert.ok(s.run("int force(int st) { memory[1] = hook_step() * 10 + st; return 0; }").ok);
  step = 4;
  assert.ok(s.call("force", [2]).ok);
  assert.equal(s.memory[1], 42);
});

test("bad signatures are rejected when defined", () => {
  const reg = new IntrinsicRegistry();
  assert.throws(() => reg.define("not a signature", () => 0), /bad intrinsic signature/);
  assert.throws(() => reg.define("int a(void); int b(void)", () => 0), /bad intrinsic signature/);
});
