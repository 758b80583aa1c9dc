// The seed documents' programs and their eight error scenarios, with the exact results we give.
import { test } from "node:test";
import assert from "node:assert/strict";
import { runC } from "../../src/vm/index.js";
import { fails, ok, text } from "./helpers.js";

test("Project Euler 10 with a 2,000,000-element sieve (the seed's code) prints 142913828922", () => {
  const r = ok(`int main() {
    int limit = 2000000;
    int* sieve = malloc(limit * 4);
    for (int i = 0; i < limit; i++) sieve[i] = 1;
    sieve[0] = 0; sieve[1] = 0;
    for (int i = 2; i * i < limit; i++)
        if (sieve[i])
            for (int j = i*i; j < limit; j += i)
                sieve[j] = 0;
    long sum = 0;
    for (int i = 2; i < limit; i++)
        if (sieve[i]) sum += i;
    printf("%ld", sum);
    return 0;
}`);
  assert.equal(r.text, "142913828922");
});

test("168 primes below 1000, PE001 233168, PE002 4613732", () => {
  assert.equal(
    text(
      "int isprime(int n){ if (n < 2) return 0; for (int d = 2; d * d <= n; d++) if (n % d == 0) return 0; return 1; } int c = 0; for (int i = 0; i < 1000; i++) c += isprime(i); return c;",
    ),
    "168",
  );
  assert.equal(
    text(
      "int pe001(int n){ int s=0; int i=1; while(i<n){ if(i%3==0||i%5==0) s+=i; i++; } return s; } return pe001(1000);",
    ),
    "233168",
  );
  assert.equal(
    text(
      "int a = 1, b = 2, s = 0; while (a <= 4000000) { if (a % 2 == 0) s += a; int t = a + b; a = b; b = t; } return s;",
    ),
    "4613732",
  );
});

test("scenario: undefined function is a compile error, not a silent 0", () => {
  assert.deepEqual(fails("int main() { return undefined_fn(5); }"), {
    kind: "type",
    message: "unknown function 'undefined_fn'",
    line: 1,
    column: 21,
  });
});

test("scenario: an infinite loop ends with 'instruction limit exceeded'", () => {
  const e = fails("int main() { int x = 0; while (1) { x++; } return x; }", {
    limits: { maxInstructions: 2_000_000 },
  });
  assert.equal(e.kind, "limit");
  assert.equal(
    e.message,
    "instruction limit exceeded (2000000 instructions; raise maxInstructions or use a larger profile, e.g. --profile large)",
  );
  // Where execution stopped: the loop.
  assert.deepEqual([e.line, e.column], [1, 25]);
  const t = fails("for (;;) {}", { limits: { maxInstructions: 1e15, wallClockMs: 50 } });
  assert.equal(t.kind, "limit");
  assert.match(t.message, /^time limit exceeded \(50 ms; raise wallClockMs/);
});

test("scenario: division by zero is a runtime error at the operator", () => {
  assert.deepEqual(fails("int main() {\n  int a = 10, b = 0;\n  return a / b;\n}"), {
    kind: "runtime",
    message: "division by zero",
    line: 3,
    column: 12,
  });
  assert.equal(fails("long a = 5, b = 0; return a % b;").message, "division by zero");
});

test("scenario: infinite recursion is a clean 'stack overflow', never a crash", () => {
  const e = fails("int f(int n) { return f(n + 1) + 1; }\nint main() { return f(0); }");
  assert.equal(e.kind, "limit");
  assert.match(e.message, /^stack overflow/);
  assert.equal(e.line, 1);
  // Deep frames with arrays exhaust the shadow stack first.
  const s = fails(
    "int g(int n) { int buf[1000]; buf[0] = n; return g(n + 1) + buf[0]; } return g(0);",
    { profile: "small" },
  );
  assert.match(s.message, /^stack overflow/);
  // The session is still usable afterwards.
  assert.equal(text("int f(int n) { return n < 1 ? 0 : 1 + f(n - 1); } return f(500);"), "500");
});

test("scenario: array access far out of bounds is a runtime error, not a host crash", () => {
  const e = fails("int main() { int a[10]; return a[500000000]; }");
  assert.deepEqual(e, {
    kind: "runtime",
    message: "memory access out of bounds",
    line: 1,
    column: 33,
  });
  const ptr = fails(
    "int f(int *p) {\n  return p[-100000000];\n}\nint main() { int x; return f(&x); }",
  );
  assert.equal(ptr.line, 2);
  const w = fails("int *p = (int *)0x7ffffff0; *p = 1; return 0;");
  assert.match(w.message, /^memory access out of bounds/);
});

test("scenario: double is a real type (no silent wrong result)", () => {
  assert.equal(text("double x = 0.1 + 0.2; return x;"), "0.30000000000000004");
  assert.equal(text('double r = 2.0; printf("%.4f", 3.14159265 * r * r); return 0;'), "12.5664");
});

test("scenario: massive allocation returns NULL", () => {
  assert.equal(text("int *p = malloc(2000000000); if (p == NULL) return -1; return 0;"), "-1");
  assert.equal(text("long n = 1L << 40; char *p = malloc(n); return p == 0;"), "1");
});

test("scenario: nested switch returns 42", () => {
  assert.equal(
    text(
      "int main() { int a = 2, b = 3; switch (a) { case 1: return 1; case 2: switch (b) { case 3: return 42; default: return 0; } default: return -1; } }",
    ),
    "42",
  );
});

test("nothing thrown escapes runC", () => {
  for (const src of [
    "",
    "}",
    "int main(",
    "#define",
    "return ((((((((((1))))))))));",
    "\u0000",
    "/*",
  ]) {
    const r = runC(src);
    assert.equal(typeof r.ok, "boolean");
  }
});
