// printf/sprintf/snprintf/puts/putchar: the common conversions with flags, width and precision.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ok, text } from "./helpers.js";

const p = (fmtAndArgs: string): string => text(`printf(${fmtAndArgs}); return 0;`);

test("integer conversions with flags and width", () => {
  assert.equal(p('"%d %i %u", -5, 42, 3000000000u'), "-5 42 3000000000");
  assert.equal(
    p('"[%5d][%-5d][%05d][%+d][% d]", 42, 42, 42, 42, 42'),
    "[   42][42   ][00042][+42][ 42]",
  );
  assert.equal(p('"%x %X %o %#x %#o", 255, 255, 8, 255, 8'), "ff FF 10 0xff 010");
  assert.equal(
    p('"%ld %lld %lu", 142913828922L, -9000000000LL, 18446744073709551615UL'),
    "142913828922 -9000000000 18446744073709551615",
  );
  assert.equal(p('"%.3d|%8.3d|%-8.3d|", 7, 7, 7'), "007|     007|007     |");
  assert.equal(p('"%*d|%-*d|", 4, 1, 3, 2'), "   1|2  |");
  assert.equal(p('"%hhd %hd", 300, 70000'), "44 4464");
});

test("floating conversions: %f %e %g with precision", () => {
  assert.equal(p('"%f %.2f %.0f %8.3f", 3.14159, 2.675, 2.5, -1.5'), "3.141590 2.67 2   -1.500");
  assert.equal(p('"%e %.2E", 12345.678, 0.000123'), "1.234568e+04 1.23E-04");
  assert.equal(
    p('"%g %g %g %g %g", 0.0001, 123456.0, 1234567.0, 0.5, 100.0'),
    "0.0001 123456 1.23457e+06 0.5 100",
  );
  assert.equal(p('"%.3g %10.4f|%-10.2f|", 3.14159, 3.14159, 2.0'), "3.14     3.1416|2.00      |");
  assert.equal(p('"%f %f", 1.0/0.0, -1.0/0.0'), "inf -inf");
  assert.equal(p('"%.1f", 0.05f'), "0.1");
});

test("chars, strings, pointers and %%", () => {
  assert.equal(p("\"%c%c%c\", 72, 'i', 33"), "Hi!");
  assert.equal(
    p('"[%s][%8s][%-8s][%.2s]", "abc", "abc", "abc", "abc"'),
    "[abc][     abc][abc     ][ab]",
  );
  assert.equal(p('"100%% %s", "done"'), "100% done");
  assert.match(p('"%p", malloc(4)'), /^0x[0-9a-f]+$/);
  assert.equal(p('"%s", (char*)0'), "(null)");
});

test("sprintf and snprintf write into buffers; puts and putchar print", () => {
  assert.equal(
    text('char b[32]; int n = sprintf(b, "%d-%s", 42, "x"); printf("%s|%d", b, n); return 0;'),
    "42-x|4",
  );
  assert.equal(
    text(
      'char b[6]; int n = snprintf(b, sizeof(b), "%s", "truncated"); printf("%s|%d", b, n); return 0;',
    ),
    "trunc|9",
  );
  assert.equal(text('puts("line"); putchar(65); putchar(10); return 0;'), "line\nA\n");
  const r = ok('printf("%d", printf("abc"));');
  assert.equal(r.stdout, "abc3");
});
