// Functions beyond the basics: structs passed and returned by value, user variadic functions
// with stdarg.h, calls before the definition, recursion, and big local arrays.
import { test } from "node:test";
import assert from "node:assert/strict";
import { fails, text } from "./helpers.js";

test("structs are passed and returned by value", () => {
  const src = `struct P { int x, y; };
struct P make(int x, int y) { struct P p; p.x = x; p.y = y; return p; }
struct P add(struct P a, struct P b) { a.x += b.x; a.y += b.y; return a; }
int main() {
  struct P a = make(1, 2), b = make(10, 20);
  struct P c = add(a, b);
  printf("%d %d %d %d", c.x, c.y, a.x, make(7, 8).y);
  return 0;
}`;
  assert.equal(text(src), "11 22 1 8");
  assert.equal(
    text(
      "typedef struct { double re, im; } C; C mul(C a, C b) { C r = { a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re }; return r; } C i = {0, 1}; C r = mul(i, i); return r.re;",
    ),
    "-1",
  );
});

test("variadic functions with va_list, va_start, va_arg, va_end and vsnprintf", () => {
  const src = `#include <stdarg.h>
int sum(int n, ...) { va_list ap; va_start(ap, n); int s = 0; for (int i = 0; i < n; i++) s += va_arg(ap, int); va_end(ap); return s; }
double avg(int n, ...) { va_list ap; va_start(ap, n); double s = 0; for (int i = 0; i < n; i++) s += va_arg(ap, double); va_end(ap); return s / n; }
void logf2(const char *fmt, ...) { char buf[64]; va_list ap; va_start(ap, fmt); vsnprintf(buf, sizeof buf, fmt, ap); va_end(ap); printf("[%s]", buf); }
int main() { printf("%d %d %.2f ", sum(3, 1, 2, 3), sum(0), avg(2, 1.0, 2.5)); logf2("%s=%ld", "k", 5000000000L); return 0; }`;
  assert.equal(text(src), "6 0 1.75 [k=5000000000]");
  assert.match(
    fails("int f(int a) { va_list ap; va_start(ap, a); return 0; } return f(1);").message,
    /without '\.\.\.'/,
  );
});

test("a function may be called before its definition", () => {
  assert.equal(
    text("int main() { return helper(20) + 1; } int helper(int x) { return x * 2; }"),
    "41",
  );
  assert.equal(
    text(
      "int even(int n); int odd(int n) { return n == 0 ? 0 : even(n - 1); } int even(int n) { return n == 0 ? 1 : odd(n - 1); } return even(10);",
    ),
    "1",
  );
});

test("big local arrays work with a small shadow stack", () => {
  assert.equal(
    text(
      "int main() { int sieve[2000000]; for (int i = 0; i < 2000000; i++) sieve[i] = i & 1; long s = 0; for (int i = 0; i < 2000000; i++) s += sieve[i]; return s; }",
      { profile: "small", limits: { maxInstructions: 500_000_000 } },
    ),
    "1000000",
  );
  assert.equal(
    text(
      "int f(int n) { char buf[100000]; buf[99999] = (char)n; return n == 0 ? 0 : buf[99999] + f(n - 1); } return f(50);",
    ),
    "1275",
  );
});

test("float classification and __LINE__", () => {
  assert.equal(
    text(
      "return isnan(0.0 / 0.0) * 1000 + isinf(1.0 / 0.0) * 100 + isfinite(2.5) * 10 + signbit(-0.0);",
    ),
    "1111",
  );
  assert.equal(text("int x = 1;\nreturn __LINE__;"), "2");
});

test("counted loops are charged up front; early exits are not overcharged", () => {
  const huge = fails("long s = 0; for (long i = 0; i < 100000000000; i++) s += i; return s;");
  assert.match(huge.message, /^instruction limit exceeded \(/);
  assert.equal(
    text(
      "int found = -1; for (long i = 0; i < 100000000000; i++) { if (i == 12345) { found = i; break; } } return found;",
    ),
    "12345",
  );
  assert.equal(text("int n = 5, s = 0; for (int i = 0; i <= n; i += 2) s += i; return s;"), "6");
});
