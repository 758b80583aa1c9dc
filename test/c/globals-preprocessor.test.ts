// Globals with initializers, static locals, and the preprocessor (#include, #define, #if).
import { test } from "node:test";
import assert from "node:assert/strict";
import { fails, text } from "./helpers.js";

test("globals with initializers are visible to every function", () => {
  assert.equal(
    text(
      "int counter = 10; void inc(void){ counter++; } int main(){ inc(); inc(); return counter; }",
    ),
    "12",
  );
  assert.equal(
    text("int table[5] = {1, 2, 3}; int main(){ return table[0] + table[2] + table[4]; }"),
    "4",
  );
  assert.equal(
    text(
      'const char *names[] = {"zero", "one", "two"}; int main(){ printf("%s", names[2]); return 0; }',
    ),
    "two",
  );
  assert.equal(
    text("double scale = 2.5; long big = 1L << 40; int main(){ return scale * 2 + (big >> 40); }"),
    "6",
  );
  assert.equal(
    text("struct P { int x, y; } origin = {3, 4}; int main(){ return origin.x * origin.y; }"),
    "12",
  );
  assert.equal(text("int g; int main(){ return g; }"), "0");
  assert.equal(text("int sq(int x){return x*x;} int r = sq(9); return r;"), "81");
  assert.equal(
    text('char buf[16] = "abc"; int *ptr = 0; int main(){ return buf[1] + (ptr == 0); }'),
    "99",
  );
});

test("static locals keep their value between calls", () => {
  assert.equal(
    text("int next(void){ static int n = 100; return n++; } next(); next(); return next();"),
    "102",
  );
});

test("#include of standard headers is accepted, unknown ones are errors", () => {
  assert.equal(
    text(
      "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <math.h>\nreturn 1;",
    ),
    "1",
  );
  const e = fails('#include "mylib.h"\nreturn 1;');
  assert.equal(e.kind, "syntax");
  assert.match(e.message, /cannot include 'mylib.h'/);
  assert.equal(e.line, 1);
});

test("#define object-like and function-like macros", () => {
  assert.equal(text("#define N 10\n#define SQ(x) ((x) * (x))\nreturn SQ(N + 1);"), "121");
  assert.equal(text("#define MAX(a, b) ((a) > (b) ? (a) : (b))\nreturn MAX(3, MAX(9, 4));"), "9");
  assert.equal(text('#define STR(x) #x\nprintf("%s", STR(hello world)); return 0;'), "hello world");
  assert.equal(text("#define CAT(a, b) a##b\nint xy = 5; return CAT(x, y);"), "5");
  assert.equal(
    text(
      "#define LIMIT 1000\nint s = 0; for (int i = 0; i < LIMIT; i++) if (i % 3 == 0 || i % 5 == 0) s += i; return s;",
    ),
    "233168",
  );
  assert.equal(text("return INT_MAX + 0L + (LONG_MAX > 0) + RAND_MAX * 0;"), "2147483648");
});

test("#if, #ifdef, #ifndef, #else, #elif", () => {
  assert.equal(text("#define DEBUG\n#ifdef DEBUG\nreturn 1;\n#else\nreturn 2;\n#endif"), "1");
  assert.equal(text("#ifndef DEBUG\nreturn 1;\n#else\nreturn 2;\n#endif"), "1");
  assert.equal(
    text("#define V 3\n#if V > 5\nreturn 1;\n#elif V == 3\nreturn 2;\n#else\nreturn 3;\n#endif"),
    "2",
  );
  assert.equal(text("#if defined(NOPE) || 0\nreturn 1;\n#endif\nreturn 0;"), "0");
  assert.match(fails("#if 1\nreturn 1;").message, /unterminated #if/);
});
