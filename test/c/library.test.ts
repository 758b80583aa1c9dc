// string.h, stdlib.h (a real allocator: reuse after free, NULL beyond the limit), math.h, ctype.h.
import { test } from "node:test";
import assert from "node:assert/strict";
import { text } from "./helpers.js";

test("string.h functions", () => {
  assert.equal(text('return strlen("hello") + strlen("");'), "5");
  assert.equal(
    text(
      'return (strcmp("abc", "abd") < 0) * 100 + (strcmp("b", "a") > 0) * 10 + (strcmp("x", "x") == 0);',
    ),
    "111",
  );
  assert.equal(
    text('return strncmp("abcdef", "abcxyz", 3) == 0 && strncmp("abcdef", "abcxyz", 4) < 0;'),
    "1",
  );
  assert.equal(
    text(
      'char b[32]; strcpy(b, "foo"); strcat(b, "bar"); printf("%s %d", b, (int)strlen(b)); return 0;',
    ),
    "foobar 6",
  );
  assert.equal(
    text('char b[8]; strncpy(b, "abcdefgh", 3); b[3] = 0; printf("%s", b); return 0;'),
    "abc",
  );
  assert.equal(
    text(
      "char *s = \"hello world\"; return (strchr(s, 'o') - s) * 100 + (strstr(s, \"wor\") - s) + (strchr(s, 'z') == 0);",
    ),
    "407",
  );
  assert.equal(
    text(
      "int a[10]; memset(a, 0, sizeof(a)); a[3] = 7; int b[10]; memcpy(b, a, sizeof(a)); return b[3] + memcmp(a, b, sizeof(a));",
    ),
    "7",
  );
  assert.equal(
    text('char s[16] = "abcdef"; memmove(s + 2, s, 4); printf("%s", s); return 0;'),
    "ababcd",
  );
  assert.equal(text("char s[4]; memset(s, 'z', 3); s[3] = 0; return s[2];"), "122");
});

test("stdlib: malloc/calloc/realloc/free with reuse after free", () => {
  assert.equal(text("char *a = malloc(100); free(a); char *b = malloc(100); return a == b;"), "1");
  assert.equal(
    text(
      "int *p = calloc(1000, sizeof(int)); int s = 0; for (int i = 0; i < 1000; i++) s += p[i]; return s;",
    ),
    "0",
  );
  assert.equal(
    text(
      "int *p = malloc(4 * sizeof(int)); for (int i = 0; i < 4; i++) p[i] = i + 1; p = realloc(p, 100 * sizeof(int)); p[99] = 5; return p[0] + p[3] + p[99];",
    ),
    "10",
  );
  assert.equal(
    text(
      "for (int i = 0; i < 100000; i++) { char *p = malloc(1000); p[0] = 1; free(p); } return 1;",
    ),
    "1",
  );
  assert.equal(text("void *p = malloc(3000000000UL); return p == NULL;"), "1");
  assert.equal(
    text("void *p = malloc(64 * 1024 * 1024); return p == 0;", { profile: "small" }),
    "1",
  );
});

test("stdlib: abs, labs, atoi, atol, strtol, rand/srand, qsort", () => {
  assert.equal(text("return abs(-5) + labs(-7L) + abs(3);"), "15");
  assert.equal(text('return atoi("  -123xyz") + atoi("77");'), "-46");
  assert.equal(text('return atol("142913828922");'), "142913828922");
  assert.equal(
    text("char *end; long v = strtol(\"0x1f rest\", &end, 16); return v * 100 + (*end == ' ');"),
    "3101",
  );
  assert.equal(text('return strtol("777", 0, 8);'), "511");
  assert.equal(
    text(
      "srand(42); int a = rand(); srand(42); int b = rand(); return a == b && a >= 0 && a <= RAND_MAX;",
    ),
    "1",
  );
  assert.equal(
    text(
      "int v[5] = {3, 1, 2, 5, 4}; int c(const void *a, const void *b) { return *(int*)a - *(int*)b; } qsort(v, 5, sizeof(int), c); return v[0] * 10000 + v[1] * 1000 + v[2] * 100 + v[3] * 10 + v[4];",
    ),
    "12345",
  );
});

test("math.h functions", () => {
  assert.equal(text("return sqrt(144.0);"), "12");
  assert.equal(text("return pow(2, 10);"), "1024");
  assert.equal(text("return floor(-2.5) * 10 + ceil(2.1);"), "-27");
  assert.equal(text("return fabs(-3.25) + round(2.5) + round(-2.5);"), "3.25");
  assert.equal(text("return fmod(7.5, 2);"), "1.5");
  assert.equal(
    text(
      'printf("%.4f %.4f %.4f %.4f", sin(1.0), cos(0.0), atan2(1.0, 1.0) * 4, exp(1.0)); return 0;',
    ),
    "0.8415 1.0000 3.1416 2.7183",
  );
  assert.equal(
    text('printf("%.3f %.3f %.3f %.3f", log(M_E), log10(1000.0), tan(0.0), atan(1.0)); return 0;'),
    "1.000 3.000 0.000 0.785",
  );
});

test("ctype.h", () => {
  assert.equal(
    text(
      "return isdigit('5') + isalpha('x') + isspace(' ') + isupper('A') + (toupper('a') == 'A') + (tolower('Q') == 'q');",
    ),
    "6",
  );
});
