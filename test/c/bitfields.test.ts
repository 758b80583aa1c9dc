// Bit-fields: gcc's x86-64 layout (storage units of the declared type, no field crossing a unit
// boundary, `:0`, unnamed padding), truncation on write, sign extension on read, compound
// assignment, increments and initializers. Every program's expected output is what gcc -O0
// printed for it (committed here; with gcc installed, the test also re-runs gcc live).
import { test } from "node:test";
import assert from "node:assert/strict";
import { runC } from "../../src/vm/index.js";
import { describeError } from "../../src/vm/result.js";
import { gccAvailable, runWithGcc } from "./gcc-oracle.js";
import { fails, text } from "./helpers.js";

interface Program {
  name: string;
  source: string;
  /** gcc -O0's output on x86-64. */
  stdout: string;
}

const PROGRAMS: Program[] = [
  {
    name: "truncation on write, sign extension on read, and the value of an assignment",
    source: `#include <stdio.h>
struct B { unsigned lo : 4, hi : 4; };
struct S { int a : 3; int b : 5; unsigned c : 1; };
int main(void) {
  struct B b;
  b.lo = 16;
  b.hi = 1;
  printf("lo=%d hi=%d sizeof=%zu\\n", b.lo, b.hi, sizeof b);
  struct S s = {0};
  s.a = 3; printf("%d ", s.a);
  s.a = 4; printf("%d ", s.a);
  s.a = 7; printf("%d ", s.a);
  s.b = -1; printf("%d ", s.b);
  s.b = 16; printf("%d ", s.b);
  s.c = 3; printf("%d\\n", s.c);
  int r1 = (b.lo = 20);
  int r2 = (s.a = 9);
  int r3 = (s.b = -17);
  printf("%d %d %d\\n", r1, r2, r3);
  int x = (b.hi = 255) + 1;
  printf("%d %d %u\\n", x, b.hi, b.lo + b.hi);
  return 0;
}
`,
    stdout: "lo=0 hi=1 sizeof=4\n3 -4 -1 -1 -16 1\n4 1 15\n16 15 19\n",
  },
  {
    name: "x.f++, ++x.f, x.f += \u2026 and friends wrap within the field",
    source: `#include <stdio.h>
struct C { unsigned u : 4; int s : 4; unsigned long w : 40; };
int main(void) {
  struct C c = {0};
  c.u++; c.u++; printf("%u ", c.u);
  c.u = 15; c.u++; printf("%u ", c.u);
  c.u--; printf("%u ", c.u);
  c.s = 7; c.s++; printf("%d ", c.s);
  c.s = -8; c.s--; printf("%d\\n", c.s);
  c.u = 14;
  unsigned p1 = c.u++;
  unsigned p2 = c.u;
  unsigned p3 = ++c.u;
  printf("%u %u %u %u\\n", p1, p2, p3, c.u);
  c.u = 3; c.u += 14; printf("%u ", c.u);
  c.u -= 2; printf("%u ", c.u);
  c.u *= 7; printf("%u ", c.u);
  c.u <<= 3; printf("%u ", c.u);
  c.u |= 5; printf("%u ", c.u);
  c.s = 5; c.s += 5; printf("%d ", c.s);
  c.s = -3; c.s *= 3; printf("%d\\n", c.s);
  int r1 = (c.u = 9) * 2;
  int r2 = (c.s += 10);
  int r3 = ++c.s;
  printf("%d %d %d\\n", r1, r2, r3);
  c.w = 0xffffffffffUL; c.w++; printf("%lu ", (unsigned long)c.w);
  c.w = 0x123456789aUL; c.w += 0x10000000000UL; printf("%lx ", (unsigned long)c.w);
  c.w = 1; c.w -= 2; printf("%lx\\n", (unsigned long)c.w);
  return 0;
}
`,
    stdout: "2 0 15 -8 7\n14 15 0 0\n1 15 9 8 13 -6 7\n18 1 2\n0 123456789a ffffffffff\n",
  },
  {
    name: "gcc x86-64 layout: units, crossing, :0, unnamed padding, unions, sizeof/offsetof and the bytes in memory",
    source: `#include <stdio.h>
#include <stddef.h>
#include <string.h>
struct F { unsigned a : 20; unsigned b : 20; };
struct G { unsigned a : 20; unsigned long b : 40; };
struct H { char a; unsigned long b : 60; };
struct K { short s : 9; short t : 9; };
struct Z { int a : 3; int : 0; int b : 3; };
struct D { char c; int : 0; char d; };
struct P { char c; int : 8; char d; };
struct Q { char c; unsigned x : 4; char d; };
struct E { char c; long x : 8; };
struct N { char a; unsigned long : 0; char b; };
struct U1 { unsigned x : 4; int y; unsigned z : 30; unsigned char w : 3; };
union UB { unsigned x : 4; char c; unsigned long l : 33; };
static void dump(const char *name, const void *p, size_t n) {
  const unsigned char *b = p;
  printf("%s:", name);
  for (size_t i = 0; i < n; i++) printf(" %02x", b[i]);
  printf("\\n");
}
int main(void) {
  printf("F %zu G %zu H %zu K %zu Z %zu D %zu P %zu Q %zu E %zu N %zu U1 %zu UB %zu\\n",
         sizeof(struct F), sizeof(struct G), sizeof(struct H), sizeof(struct K),
         sizeof(struct Z), sizeof(struct D), sizeof(struct P), sizeof(struct Q),
         sizeof(struct E), sizeof(struct N), sizeof(struct U1), sizeof(union UB));
  printf("offsetof D.d %zu P.d %zu Q.d %zu N.b %zu U1.y %zu\\n", offsetof(struct D, d),
         offsetof(struct P, d), offsetof(struct Q, d), offsetof(struct N, b), offsetof(struct U1, y));
  struct F f; memset(&f, 0, sizeof f); f.a = 0xfffff; f.b = 0x12345; dump("F", &f, sizeof f);
  struct G g; memset(&g, 0, sizeof g); g.a = 0xabcde; g.b = 0xfedcba9876UL; dump("G", &g, sizeof g);
  printf("G %x %lx\\n", g.a, (unsigned long)g.b);
  struct H h; memset(&h, 0, sizeof h); h.a = 'h'; h.b = 0xfedcba987654321UL; dump("H", &h, sizeof h);
  struct K k; memset(&k, 0, sizeof k); k.s = -1; k.t = 100; dump("K", &k, sizeof k);
  printf("K %d %d\\n", k.s, k.t);
  struct Z z; memset(&z, 0, sizeof z); z.a = -1; z.b = 2; dump("Z", &z, sizeof z);
  struct Q q; memset(&q, 0xaa, sizeof q); q.c = 1; q.x = 255; q.d = 2; dump("Q", &q, sizeof q);
  printf("Q %d %u %d\\n", q.c, q.x, q.d);
  struct E e; memset(&e, 0, sizeof e); e.c = 1; e.x = -2; dump("E", &e, sizeof e);
  printf("E %ld\\n", (long)e.x);
  struct U1 u; memset(&u, 0xff, sizeof u); u.x = 0; u.y = 5; u.z = 0; u.w = 2; dump("U1", &u, sizeof u);
  union UB ub; memset(&ub, 0, sizeof ub); ub.l = 0x1ffffffffUL; dump("UB", &ub, sizeof ub);
  printf("UB %u %d\\n", ub.x, ub.c);
  return 0;
}
`,
    stdout:
      "F 8 G 8 H 16 K 4 Z 8 D 5 P 3 Q 4 E 8 N 9 U1 16 UB 8\noffsetof D.d 4 P.d 2 Q.d 2 N.b 8 U1.y 4\nF: ff ff 0f 00 45 23 01 00\nG: de bc 6a 87 a9 cb ed 0f\nG abcde fedcba9876\nH: 68 00 00 00 00 00 00 00 21 43 65 87 a9 cb ed 0f\nK: ff 01 64 00\nK -1 100\nZ: 07 00 00 00 02 00 00 00\nQ: 01 af 02 aa\nQ 1 15 2\nE: 01 fe 00 00 00 00 00 00\nE -2\nU1: f0 ff ff ff 05 00 00 00 00 00 00 c0 fa ff ff ff\nUB: ff ff ff ff 01 00 00 00\nUB 15 -1\n",
  },
  {
    name: "positional, designated (also nested), static and automatic initializers",
    source: `#include <stdio.h>
#include <string.h>
struct R { unsigned r : 5, g : 6, b : 5; };
struct M { char tag; int v : 7; unsigned flag : 1; long big : 40; struct R color; };
struct M global_m = {'x', -5, 1, -123456789, {31, 63, 31}};
struct M global_d = {.big = 77, .flag = 1, .color.g = 9};
struct R palette[3] = {{1, 2, 3}, [2] = {.b = 7, .r = 4}};
static struct { unsigned a : 3; unsigned : 5; unsigned b : 3; } padded = {9, 10};
static void show(const char *name, struct M m) {
  printf("%s %c %d %u %ld %u %u %u\\n", name, m.tag ? m.tag : '-', m.v, m.flag, (long)m.big,
         m.color.r, m.color.g, m.color.b);
}
int main(void) {
  show("global_m", global_m);
  show("global_d", global_d);
  struct M local_m = {'y', 70, 3, 0xffffffffffL, {32, 64, 33}};
  show("local_m", local_m);
  struct M local_d = {.v = -64, .color = {.b = 1}};
  show("local_d", local_d);
  int n = 100;
  struct R dyn = {n, n + 1, n / 3};
  printf("dyn %u %u %u\\n", dyn.r, dyn.g, dyn.b);
  for (int i = 0; i < 3; i++) printf("palette %u %u %u\\n", palette[i].r, palette[i].g, palette[i].b);
  printf("padded %u %u %zu\\n", padded.a, padded.b, sizeof padded);
  struct R lit = (struct R){.g = 65};
  printf("lit %u %u %u\\n", lit.r, lit.g, lit.b);
  struct R copy = palette[0];
  copy.g += 62;
  printf("copy %u %u %u / %u\\n", copy.r, copy.g, copy.b, palette[0].g);
  unsigned short raw;
  memcpy(&raw, &palette[2], sizeof raw);
  printf("raw %04x sizeof %zu\\n", raw, sizeof(struct R));
  return 0;
}
`,
    stdout:
      "global_m x -5 1 -123456789 31 63 31\nglobal_d - 0 1 77 0 9 0\nlocal_m y -58 1 -1 0 0 1\nlocal_d - -64 0 0 0 0 1\ndyn 4 37 1\npalette 1 2 3\npalette 0 0 0\npalette 4 0 7\npadded 1 2 4\nlit 0 1 0\ncopy 1 0 3 / 2\nraw 3804 sizeof 4\n",
  },
  {
    name: "through pointers and arrays, promotion, _Bool and enum fields, anonymous members",
    source: `#include <stdio.h>
#include <stdlib.h>
enum Color { RED, GREEN, BLUE, WHITE };
enum Sign { NEG = -1, ZERO, POS };
struct Node { unsigned kind : 2; unsigned long id : 34; struct Node *next; _Bool live : 1; enum Color c : 2; enum Sign s : 2; };
struct A { struct { unsigned x : 3, y : 3; }; union { unsigned z : 4; unsigned char all; }; };
struct S { int a; union { int c; int d; }; int e; };
int main(void) {
  struct Node *head = NULL;
  for (int i = 0; i < 5; i++) {
    struct Node *n = malloc(sizeof *n);
    n->kind = i; n->id = 0x300000000UL + i; n->live = i & 1; n->c = i; n->s = i - 1; n->next = head;
    head = n;
  }
  for (struct Node *p = head; p; p = p->next)
    printf("%u %lx %d %d %d\\n", p->kind, (unsigned long)p->id, p->live, p->c, p->s);
  struct Node arr[4] = {0};
  for (int i = 0; i < 4; i++) arr[i].kind = 3 - i, arr[i].c = WHITE;
  int sum = 0;
  for (int i = 0; i < 4; i++) sum += arr[i].kind * 10 + arr[i].c;
  printf("sum %d sizeof %zu\\n", sum, sizeof(struct Node));
  struct { unsigned u4 : 4; unsigned u32 : 32; unsigned long ul20 : 20; long l40 : 40; } pr = {1, 1, 1, 1};
  printf("promote %d %d %d %d %zu %zu\\n", pr.u4 - 2 < 0, pr.u32 - 2 < 0, pr.ul20 - 2 < 0, pr.l40 - 2 < 0,
         sizeof(pr.u4 + 0), sizeof(pr.l40 + 0));
  struct A a = {{5, 6}, {.z = 9}};
  printf("anon %u %u %u %u sizeof %zu\\n", a.x, a.y, a.z, a.all, sizeof a);
  a.all = 0xff; a.x = 0;
  printf("anon %u %u %u\\n", a.x, a.z, a.all);
  struct S s = {1, 2, 3};
  printf("anonymous union: a=%d c=%d d=%d e=%d\\n", s.a, s.c, s.d, s.e);
  struct S t = {.e = 9, .d = 4};
  printf("designated: a=%d c=%d e=%d\\n", t.a, t.c, t.e);
  return 0;
}
`,
    stdout:
      "0 300000004 0 0 -1\n3 300000003 1 3 -2\n2 300000002 0 2 1\n1 300000001 1 1 0\n0 300000000 0 0 -1\nsum 72 sizeof 24\npromote 1 0 1 1 4 8\nanon 5 6 9 9 sizeof 8\nanon 0 15 255\nanonymous union: a=1 c=2 d=2 e=3\ndesignated: a=0 c=4 e=9\n",
  },
];

for (const program of PROGRAMS) {
  test(`bit-fields: ${program.name}`, () => {
    const outcome = runC(program.source);
    assert.ok(outcome.ok, outcome.ok ? "" : describeError(outcome.error));
    assert.equal(outcome.stdout, program.stdout);
    assert.equal(outcome.exitCode, 0);
    if (gccAvailable()) {
      const native = runWithGcc(program.source, "bitfields");
      assert.equal(native.stdout, program.stdout, "gcc disagrees with the recorded output");
    }
  });
}

test("bit-fields: the case from the issue, as a snippet", () => {
  assert.equal(
    text(
      'struct B{unsigned lo:4,hi:4;}; struct B b; b.lo=16; b.hi=1; printf("%d %d %zu", b.lo, b.hi, sizeof b);',
    ),
    "0 1 4",
  );
});

test("bit-fields: an anonymous union in a positional initializer takes one value", () => {
  assert.equal(
    text(
      'struct S{int a; union{int c; int d;}; int e;} s={1,2,3}; printf("%d %d %d", s.a, s.c, s.e);',
    ),
    "1 2 3",
  );
});

const ERRORS: [source: string, position: string, message: RegExp][] = [
  [
    "struct S { unsigned f : 3; } x;\nunsigned *p = &x.f;",
    "2:15",
    /^cannot take the address of bit-field 'f'$/,
  ],
  [
    "struct S { unsigned f : 3; } x;\nreturn sizeof x.f;",
    "2:8",
    /^'sizeof' applied to a bit-field$/,
  ],
  [
    "struct S { unsigned f : 3; };\nreturn offsetof(struct S, f);",
    "2:8",
    /^cannot take the address of bit-field 'f'$/,
  ],
  [
    "struct S { unsigned f : 33; };",
    "1:25",
    /^width of bit-field 'f' \(33\) exceeds the width of its type \(32 bits\)$/,
  ],
  [
    "struct S { _Bool b : 2; };",
    "1:22",
    /^width of bit-field 'b' \(2\) exceeds the width of its type \(1 bit\)$/,
  ],
  ["struct S { int f : -1; };", "1:20", /^bit-field 'f' has a negative width \(-1\)$/],
  ["struct S { int f : 0; };", "1:20", /^bit-field 'f' has zero width$/],
  [
    "struct S { double d : 3; };",
    "1:19",
    /^bit-field 'd' has type 'double', which is not an integer type$/,
  ],
  [
    "struct S { int *p : 3; };",
    "1:16",
    /^bit-field 'p' has type 'int \*', which is not an integer type$/,
  ],
];

for (const [source, position, message] of ERRORS) {
  test(`bit-fields: rejects ${JSON.stringify(source)}`, () => {
    const error = fails(source);
    assert.equal(error.kind, "type");
    assert.match(error.message, message);
    assert.equal(`${error.line}:${error.column}`, position);
  });
}
