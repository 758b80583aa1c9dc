// VmSession.adoptDefinitions: which blocks may run in a fresh sandbox on a VM worker while their
// definitions are adopted here, and that the worker, given the prelude, computes what this
// session would have.
import { test } from "node:test";
import assert from "node:assert/strict";
import { VmSession } from "../../src/vm/session.js";
import { runJob } from "../../src/vm/job.js";

const FIB = "int fib(int k) { return k < 2 ? k : fib(k - 1) + fib(k - 2); }";

test("adopted definitions reach later worker runs through the prelude", () => {
  const here = new VmSession();
  const reference = new VmSession();
  const blocks = [
    `${FIB} fib(20)`,
    "int sq(int x) { return x * x; } sq(fib(10))",
    "sq(7) + fib(5)",
  ];
  for (const block of blocks) {
    const prelude = here.adoptDefinitions(block);
    assert.ok(prelude, `adopted: ${block}`);
    const worker = runJob({ language: "c", source: block, prelude });
    const local = reference.run(block);
    assert.equal(worker.ok && worker.text, local.ok && local.text, block);
  }
  assert.equal(here.adoptDefinitions("sq(3)")!.length, 2, "only blocks that defined something");
  // The adopted functions are callable here too (a hook could call them).
  const call = here.call("sq", [9]);
  assert.equal(call.ok && call.text, "81");
});

test("blocks that read the model or run-carried state, or declare globals, are refused", () => {
  const s = new VmSession();
  for (const block of [
    "tok_count()",
    "memory[0] = 5",
    "rand()",
    "int g = 3; g",
    "int f() { static int calls; return ++calls; } f()",
    "int main() { long n = 1; return logit_get(n); }",
  ])
    assert.equal(s.adoptDefinitions(block), null, block);
  assert.equal(s.adoptDefinitions("int broken( {"), null, "a block that does not compile");
  assert.equal(s.hasFunction("f"), false, "a refused block leaves nothing behind");
});

test("names defined by code run here keep blocks that use them on this thread", () => {
  const s = new VmSession();
  assert.ok(s.run("int twice(int k) { return 2 * k; }").ok);
  assert.equal(s.adoptDefinitions("twice(4)"), null);
  assert.ok(s.adoptDefinitions("int thrice(int k) { return 3 * k; } thrice(2)"));
  assert.ok(s.adoptDefinitions("thrice(5)"));
  // Redefined here: a worker would still see the adopted one, so nothing moves any more.
  assert.ok(s.run("int thrice(int k) { return 30 * k; }").ok);
  assert.equal(s.adoptDefinitions("thrice(5)"), null);
  assert.equal(s.adoptDefinitions("1 + 1"), null);
});
