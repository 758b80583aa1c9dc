// Compile errors: each names the problem and where it is (line:column), with the right kind.
import { test } from "node:test";
import assert from "node:assert/strict";
import { fails } from "./helpers.js";

test("syntax errors carry kind 'syntax' and a position", () => {
  const e = fails("int main() {\n  int x = 5\n  return x;\n}");
  assert.equal(e.kind, "syntax");
  assert.match(e.message, /expected ';'/);
  assert.equal(e.line, 2);
  const u = fails("int f( { }");
  assert.equal(u.kind, "syntax");
  const s = fails('char *s = "abc;');
  assert.match(s.message, /unterminated string/);
  assert.equal(s.column, 11);
  assert.match(fails("return 1 +;").message, /expected an expression/);
  assert.match(fails("int main() { return 0;").message, /expected '}'/);
  assert.match(fails("int x = 1; goto done;").message, /label .done. used but not defined/);
});

test("unknown names are type errors with the position of the use", () => {
  const e = fails("int main() {\n  return foo(3);\n}");
  assert.deepEqual(e, { kind: "type", message: "unknown function 'foo'", line: 2, column: 10 });
  const v = fails("int main() { return y + 1; }");
  assert.equal(v.kind, "type");
  assert.equal(v.message, "undeclared identifier 'y'");
  assert.equal(v.column, 21);
  const d = fails("int helper(int);\nint main() { return helper(2); }");
  assert.match(d.message, /'helper' is declared but never defined/);
  assert.equal(d.line, 2);
});

test("type errors name the offending types", () => {
  assert.match(
    fails("struct P { int x; }; struct P p; return p + 1;").message,
    /cannot be applied to 'struct P'/,
  );
  assert.match(fails("int x = 1; return *x;").message, /cannot dereference 'int'/);
  assert.match(fails("double d = 1.5; return d % 2;").message, /needs integer operands/);
  assert.match(
    fails("struct P { int x; }; struct P p; return p.z;").message,
    /has no member named 'z'/,
  );
  assert.match(
    fails("int f(int a) { return a; } return f(1, 2);").message,
    /takes 1 argument\(s\) but 2 were given/,
  );
  assert.match(fails("const int k = 1; k = 2; return k;").message, /const variable 'k'/);
  assert.match(fails("int a[3]; a = 0; return 0;").message, /not assignable|assign to an array/);
  assert.match(
    fails("double d = 2.0; int *p = d; return 0;").message,
    /cannot assign 'double' to 'int \*'/,
  );
});

test("calling a function defined further down works; calling it with a different type is rejected", () => {
  assert.match(
    fails("int main() { return twice(2.5); } double twice(double x) { return 2 * x; }").message,
    /used before its declaration/,
  );
});

test("intrinsic names without a model attached give a clear error", () => {
  const e = fails("int main() {\n  int t = logit_argmax();\n  return t;\n}");
  assert.deepEqual(e, {
    kind: "type",
    message: "intrinsic 'logit_argmax' is not available here (no model attached)",
    line: 2,
    column: 11,
  });
});
