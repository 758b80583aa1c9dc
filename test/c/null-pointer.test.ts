// A dereference of NULL or of the low page traps with the position of the access, instead of
// reading or overwriting low VM memory (where the allocator keeps its state).
import { test } from "node:test";
import assert from "node:assert/strict";
import { runC } from "../../src/vm/index.js";
import { fails, text } from "./helpers.js";

const NULL_DEREF = /^null pointer dereference \(address below \d+\)$/;

test("reading through NULL traps at the dereference", () => {
  const e = fails("int main() {\n  int *p = 0;\n  return *p;\n}");
  assert.equal(e.kind, "runtime");
  assert.match(e.message, NULL_DEREF);
  assert.deepEqual([e.line, e.column], [3, 10]);
});

test("writing through a NULL struct pointer or indexing near NULL traps", () => {
  const src =
    "struct N { int v; struct N *next; };\nint main() {\n  struct N *n = 0;\n  n->next = 0;\n  return 0;\n}";
  const e = fails(src);
  assert.match(e.message, NULL_DEREF);
  assert.equal(e.line, 4);
  // A small offset from NULL (an array index) is in the guard page too.
  const indexed = fails('char *s = 0;\nprintf("%d", s[500]);');
  assert.match(indexed.message, NULL_DEREF);
  assert.deepEqual([indexed.line, indexed.column], [2, 15]);
});

test("copying a struct to or from a NULL pointer traps; offsetof (an address, no access) does not", () => {
  assert.match(
    fails("struct S { int a, b; };\nstruct S *p = 0;\nstruct S t = {1, 2};\n*p = t;").message,
    NULL_DEREF,
  );
  assert.match(
    fails("struct S { int a, b; };\nstruct S *p = 0;\nstruct S t = *p;\nt.a").message,
    NULL_DEREF,
  );
  assert.equal(
    text("#include <stddef.h>\nstruct P { char c; long x; };\noffsetof(struct P, x)"),
    "8",
  );
});

test("valid pointers into the heap, the stack and globals are unaffected", () => {
  assert.equal(text("int *p = malloc(40); p[3] = 7; int s = p[3]; free(p); s"), "7");
  assert.equal(text("int a[4] = {1, 2, 3, 4}; int *q = a; q[2] + *q"), "4");
  assert.equal(text("int g = 5; int *gp = &g; *gp * 2"), "10");
  const r = runC('char *d = strdup("hi"); printf("%s %d", d, (int)strlen(d)); free(d);');
  assert.ok(r.ok && r.text === "hi 2");
});

test("an element of a NULL array of arrays traps at the element access, not at the row", () => {
  // p[1] is a row (an address, no access); p[1][2] is the access that must trap.
  const read = fails("int (*p)[4] = 0;\nint x = p[1][2];\nx");
  assert.match(read.message, /^null pointer dereference/);
  assert.equal(read.line, 2);
  const write = fails("double (*m)[3] = 0;\nm[0][1] = 2.5;\n0");
  assert.match(write.message, /^null pointer dereference/);
  assert.equal(write.line, 2);
  assert.equal(text("int g[3][4]; g[2][3] = 9; int (*q)[4] = g; q[2][3] + g[2][3]"), "18");
});

test("a global array indexed by loop variables skips the check only where their bounds prove it", () => {
  // Where a sits, from the same declarations (globals are laid out in declaration order).
  const prefix = "int a[4];\n";
  const at = Number(text(`${prefix}(long)a`));
  assert.ok(at >= 1024, `a at ${at}`);
  assert.equal(
    text(
      `${prefix}int main() { int s = 0; for (int i = 0; i < 4; i++) { a[i] = i + 1; s += a[i]; } return s; }`,
    ),
    "10",
  );
  // Constant loop bounds that reach below the guard: the check stays and traps.
  const first = -Math.floor(at / 4);
  const loop = `  for (int i = ${first}; i < ${first + 2}; i++) s += a[i];`;
  const e = fails(`${prefix}int f(void) {\n  int s = 0;\n${loop}\n  return s;\n}\nf()`);
  assert.match(e.message, NULL_DEREF);
  // At the subscript's '['.
  assert.deepEqual([e.line, e.column], [4, loop.indexOf("a[i]") + 2]);
});
