// Integer widths, signedness, the usual arithmetic conversions, 64-bit long, float and double.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ok, text } from "./helpers.js";

test("char, short and int wrap at their widths", () => {
  assert.equal(text("char c = 127; c++; return c;"), "-128");
  assert.equal(text("unsigned char c = 255; c += 2; return c;"), "1");
  assert.equal(text("short s = 32767; s = s + 1; return s;"), "-32768");
  assert.equal(text("unsigned short s = 0; s--; return s;"), "65535");
  assert.equal(text("int i = 2147483647; i++; return i;", { wrapv: true }), "-2147483648");
  assert.equal(
    text("return sizeof(char) * 1000 + sizeof(short) * 100 + sizeof(int) * 10 + sizeof(long);"),
    "1248",
  );
  assert.equal(text("return sizeof(long long) + sizeof(double) + sizeof(float);"), "20");
});

test("unsigned arithmetic and comparisons follow C's conversions", () => {
  assert.equal(text("unsigned x = 0; x = x - 1; return x;"), "4294967295");
  assert.equal(text("return -1 < 1u;"), "0");
  assert.equal(text("unsigned a = 7; return a / 2;"), "3");
  assert.equal(text("return (unsigned)-8 >> 28;"), "15");
  assert.equal(text("return -8 >> 1;"), "-4");
  assert.equal(text("return -7 / 2 * 10 + -7 % 2;"), "-31");
});

test("long and long long are 64-bit", () => {
  assert.equal(text("long n = 142913828922; return n;"), "142913828922");
  assert.equal(
    text("long long a = 1LL << 62; return a + (a - 1) + a;", { wrapv: true }),
    "-4611686018427387905",
  );
  assert.equal(
    text("long f = 1; for (int i = 1; i <= 20; i++) f *= i; return f;"),
    "2432902008176640000",
  );
  assert.equal(text("unsigned long u = 18446744073709551615UL; return u;"), "18446744073709551615");
  assert.equal(text("int a = 100000; long b = a * (long)a; return b;"), "10000000000");
  assert.equal(text("long x = 0x7fffffffffffffff; return x;"), "9223372036854775807");
  assert.equal(text("long m = 3000000000; int i = m; return i;"), "-1294967296");
});

test("double and float arithmetic, conversions and truncation", () => {
  assert.equal(text("double x = 1.0 / 3; return x;"), "0.3333333333333333");
  assert.equal(text("float f = 0.1f; return f;"), "0.1");
  assert.equal(text("double d = 7.9; int i = d; return i;"), "7");
  assert.equal(text("double d = -7.9; return (int)d;"), "-7");
  assert.equal(text("int i = 7; return i / 2.0;"), "3.5");
  assert.equal(text("float a = 1.5f; double b = a * 2; return b;"), "3");
  assert.equal(text("return 1e300 * 1e300;"), "inf");
  assert.equal(text("double x = 3.0; x *= 1.5; x -= 0.5; return x;"), "4");
  assert.equal(
    text("double t = 0; for (int i = 0; i < 10; i++) t += 0.1; return t > 0.99 && t < 1.01;"),
    "1",
  );
  assert.equal(ok("return 2.5f;").value.ctype, "float");
});

test("literals: hex, octal, char escapes and suffixes", () => {
  assert.equal(text("return 0xFF + 010 + 0b101;"), "268");
  assert.equal(text("return '\\n' + '\\t' * 100 + '\\x41' * 1000 + '\\101' * 10000;"), "715910");
  assert.equal(text("return 10u + 5l + 3UL + 2LL;"), "20");
  assert.equal(text("return 1.5e3 + .5;"), "1500.5");
});

test("all operators with C precedence", () => {
  assert.equal(text("return 2 + 3 * 4 - 10 / 5 % 3;"), "12");
  assert.equal(text("return 1 << 2 + 1;"), "8");
  assert.equal(text("return (5 & 3) | (8 ^ 2);"), "11");
  assert.equal(text("return 1 < 2 == 1;"), "1");
  assert.equal(text("return !0 + !5 + ~0;"), "0");
  assert.equal(text("int a = 0; int b = (a++, a++, a); return b * 10 + a;"), "22");
  assert.equal(text("int x = 5; return x > 3 ? x < 10 ? 1 : 2 : 3;"), "1");
  assert.equal(text("int a = 0; if (a != 0 && 10 / a > 1) return 1; return 0 || a == 0;"), "1");
  assert.equal(
    text(
      "int x = 10; x += 5; x -= 3; x *= 2; x /= 4; x %= 4; x <<= 3; x >>= 1; x |= 1; x &= 7; x ^= 2; return x;",
    ),
    "3",
  );
  assert.equal(text("int i = 5; int a = i++ + ++i; return a * 100 + i;"), "1207");
  assert.equal(text("int x = 3; return -x * -x - +x;"), "6");
});

test("bool, enums, typedef and const", () => {
  assert.equal(text("#include <stdbool.h>\nbool b = 5; return b + true;"), "2");
  assert.equal(
    text("enum Color { RED, GREEN = 5, BLUE }; enum Color c = BLUE; return c + RED;"),
    "6",
  );
  assert.equal(text("typedef unsigned long u64; u64 x = 1; return x << 40;"), "1099511627776");
  assert.equal(text("const int k = 12; return k * 2;"), "24");
  assert.equal(
    text("typedef struct { int x, y; } Pt; Pt p; p.x = 3; p.y = 4; return p.x * p.y;"),
    "12",
  );
});
