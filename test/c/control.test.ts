// Statements: if/else, the three loops, break/continue, switch with fallthrough and nesting.
import { test } from "node:test";
import assert from "node:assert/strict";
import { fails, text } from "./helpers.js";

test("if/else chains and loops", () => {
  assert.equal(
    text("int x = 15; if (x % 15 == 0) return 1; else if (x % 5 == 0) return 2; else return 3;"),
    "1",
  );
  assert.equal(text("int i = 0, s = 0; while (i < 10) { s += i; i++; } return s;"), "45");
  assert.equal(text("int i = 0; do { i += 3; } while (i < 10); return i;"), "12");
  assert.equal(text("int n = 0; do n++; while (0); return n;"), "1");
  assert.equal(
    text(
      "int s = 0; for (int i = 0; i < 10; i++) { if (i == 7) break; if (i % 2) continue; s += i; } return s;",
    ),
    "12",
  );
  assert.equal(
    text(
      "int s = 0; for (int i = 0; i < 5; i++) for (int j = 0; j < 5; j++) { if (j > i) break; s++; } return s;",
    ),
    "15",
  );
  assert.equal(text("int i = 0; for (;;) { if (++i == 100) break; } return i;"), "100");
  assert.equal(
    text("int i = 10, n = 0; while (i--) { if (i % 3 == 0) continue; n++; } return n;"),
    "6",
  );
});

test("switch with fallthrough, default and break", () => {
  const f =
    "int f(int x){ int r = 0; switch (x) { case 1: r += 1; case 2: r += 2; break; case 3: case 4: r = 34; break; default: r = -1; } return r; }";
  assert.equal(text(`${f} return f(1);`), "3");
  assert.equal(text(`${f} return f(2);`), "2");
  assert.equal(text(`${f} return f(4);`), "34");
  assert.equal(text(`${f} return f(9);`), "-1");
  assert.equal(text("int x = 5; switch (x) { case 1: return 1; } return 0;"), "0");
  assert.equal(
    text("char c = 'b'; switch (c) { case 'a': return 1; case 'b': return 2; default: return 3; }"),
    "2",
  );
  assert.equal(
    text("long v = 5000000000; switch (v) { case 5000000000: return 1; default: return 0; }"),
    "1",
  );
});

test("nested switch inside switch and loops (the seed's scenario returns 42)", () => {
  const src = `int classify(int a, int b) {
    switch (a) {
      case 1:
        switch (b) {
          case 1: return 11;
          case 2: return 42;
          default: return 10;
        }
      case 2:
        return 20;
      default:
        return 0;
    }
  }
  return classify(1, 2);`;
  assert.equal(text(src), "42");
  assert.equal(
    text(
      "int s = 0; for (int i = 0; i < 6; i++) { switch (i % 3) { case 0: continue; case 1: s += 10; break; default: switch (i) { case 2: s += 1; break; default: s += 100; } } } return s;",
    ),
    "121",
  );
});

test("goto jumps to a label anywhere in the function (cleanup, leaving nested loops, backward)", () => {
  const src = `int process(int n) {
  int status = -1;
  int *a = malloc(n * sizeof(int));
  if (!a) goto done;
  status = 0;
  for (int i = 0; i < n; i++) status += i;
  free(a);
done:
  return status;
}
int main() {
  int i, j;
  for (i = 0; i < 10; i++)
    for (j = 0; j < 10; j++)
      if (i * j == 24) goto found;
  return -1;
found:
  printf("%d %d %d", process(10), i, j);
  return 0;
}`;
  assert.equal(text(src), "45 3 8");
  assert.equal(text("int i = 1; if (i) goto end; i = 100; end: return i;"), "1");
  assert.equal(text("int i = 0; again: i++; if (i < 3) goto again; return i;"), "3");
  // Into a nested block, the branch of an if and a loop's body (gcc-checked outputs).
  assert.equal(
    text(`int n = 0;
goto inner;
{ n += 100; inner: n += 1; }
if (0) { mid: n += 10; }
if (n < 20) goto mid;
int k = 0;
while (k < 2) { n += 1000; body: n += 5; k++; }
if (n < 2100) goto body;
return n;`),
    "2101",
  );
  // `1 && 1`, `1 || 0`, `!0` and `?:` on literals are constants: an array they size is an
  // ordinary array, allocated with the frame, so a goto past its declaration still finds it
  // (c-testsuite 00207; gcc prints 7). Sized at run time, the goto would skip its allocation.
  assert.equal(
    text(`goto start;
{
  int a[1 && 1]; int b[1 || 0]; int c[!0 ? 1 : 2];
start:
  a[0] = 1; b[0] = 2; c[0] = 4;
  return a[0] + b[0] + c[0];
}`),
    "7",
  );
  assert.equal(text("int a[0 && 1 ? 3 : 5]; int b[!1 || 2]; return sizeof a + sizeof b;"), "24");
  // A goto loop is metered like any loop: it cannot spin forever.
  assert.match(
    fails("top: goto top;", { limits: { maxInstructions: 1_000_000 } }).message,
    /^instruction limit exceeded/,
  );
});

test("variable-length arrays (one dimension) in functions and at top level", () => {
  assert.equal(
    text(
      "int f(int n) { int a[n]; for (int i = 0; i < n; i++) a[i] = i * i; long s = 0; for (int i = 0; i < n; i++) s += a[i]; return s + sizeof(a); } int t = 0; for (int k = 1; k < 50; k++) t += f(k); return t;",
    ),
    "485100",
  );
  assert.equal(
    text(
      'int n = 5; int dp[n + 1]; dp[0] = 1; for (int i = 1; i <= n; i++) dp[i] = dp[i - 1] * i; printf("%d %d", dp[n], (int)(sizeof dp / sizeof dp[0]));',
    ),
    "120 6",
  );
  assert.match(
    fails("int n = 3; int m[n][n]; return 0;").message,
    /multi-dimensional variable-length arrays/,
  );
  assert.match(fails("int n = -1; int a[n]; return 0;").message, /^stack overflow/);
});
