// Pointers, arrays (multi-dimensional, 2,000,000 elements), structs (nested, arrays of
// structs, ->), unions and function pointers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { text } from "./helpers.js";

test("pointers: address-of, dereference, arithmetic, comparison", () => {
  assert.equal(text("int x = 5; int *p = &x; *p = 7; return x;"), "7");
  assert.equal(
    text("int a[5] = {1,2,3,4,5}; int *p = a + 1; p += 2; return *p + p[-1] + (p - a);"),
    "10",
  );
  assert.equal(
    text("int a[4]; int *p = &a[3]; int *q = a; return (p > q) * 10 + (int)(p - q);"),
    "13",
  );
  assert.equal(text("int x = 1; int *p = &x; int **pp = &p; **pp = 9; return x;"), "9");
  assert.equal(
    text(
      "void swap(int *a, int *b){int t=*a;*a=*b;*b=t;} int x=1,y=2; swap(&x,&y); return x*10+y;",
    ),
    "21",
  );
  assert.equal(text('char s[] = "hello"; char *p = s; while (*p) p++; return p - s;'), "5");
  assert.equal(text("int *p = 0; return p == NULL;"), "1");
  assert.equal(
    text("long v[3] = {1, 2, 3}; long *p = v; p++; return *p * 100 + sizeof(v);"),
    "224",
  );
});

test("arrays: initializers, multi-dimensional, large", () => {
  assert.equal(text("int a[] = {5, 6, 7}; return sizeof(a) / sizeof(a[0]) + a[2];"), "10");
  assert.equal(
    text("int a[10] = {1}; int s = 0; for (int i = 0; i < 10; i++) s += a[i]; return s;"),
    "1",
  );
  assert.equal(
    text(
      "int m[3][4]; for (int i=0;i<3;i++) for (int j=0;j<4;j++) m[i][j]=i*10+j; return m[2][3] + m[1][0];",
    ),
    "33",
  );
  assert.equal(
    text("int m[2][3] = {{1,2,3},{4,5,6}}; return m[1][2] * sizeof(m) + sizeof(m[0]);"),
    "156",
  );
  assert.equal(
    text("int big[2000000]; for (int i = 0; i < 2000000; i++) big[i] = i; return big[1999999];"),
    "1999999",
  );
  assert.equal(text("double g[300][300]; g[299][299] = 2.5; return g[299][299] * 2;"), "5");
  assert.equal(text('char grid[3][4] = {"abc", "def", "ghi"}; return grid[2][1];'), "104");
});

test("initializers may leave out inner braces", () => {
  assert.equal(text("int m[3][3] = {0}; m[2][2] = 5; return m[0][0] + m[2][2];"), "5");
  assert.equal(
    text(
      "struct P { int x, y; }; struct P ps[2] = {1, 2, 3, 4}; int m[2][3] = {1, 2, 3, 4}; return ps[1].x * 1000 + m[1][0] * 100 + m[0][2] * 10 + m[1][2];",
    ),
    "3430",
  );
});

test("structs: members, nesting, arrays of structs, pointers and ->", () => {
  assert.equal(text("struct P { int x; int y; }; struct P p = {3, 4}; return p.x * p.y;"), "12");
  assert.equal(
    text(
      "struct In { int a; double d; }; struct Out { char c; struct In in; int arr[3]; }; struct Out o; o.in.d = 1.5; o.arr[2] = 4; o.c = 'x'; return o.in.d * o.arr[2] + sizeof(struct Out);",
    ),
    "46",
  );
  assert.equal(
    text(
      "struct P { int x, y; }; struct P ps[10]; for (int i = 0; i < 10; i++) { ps[i].x = i; ps[i].y = i * i; } return ps[9].y + ps[3].x;",
    ),
    "84",
  );
  assert.equal(
    text(
      "struct N { int v; struct N *next; }; struct N a, b; a.v = 1; b.v = 2; a.next = &b; b.next = 0; struct N *p = &a; int s = 0; while (p) { s += p->v; p = p->next; } return s;",
    ),
    "3",
  );
  assert.equal(
    text(
      "struct P { int x, y; }; struct P a = {1, 2}; struct P b; b = a; b.x = 10; return a.x + b.x + b.y;",
    ),
    "13",
  );
  assert.equal(
    text(
      "struct P { int x; }; void bump(struct P *p) { p->x++; } struct P q = {.x = 41}; bump(&q); return q.x;",
    ),
    "42",
  );
  assert.equal(
    text(
      "union U { int i; float f; char c[4]; }; union U u; u.i = 0x41424344; return u.c[0] + sizeof(union U);",
    ),
    "72",
  );
  assert.equal(
    text(
      "typedef struct Node { int val; struct Node *next; } Node; Node *head = 0; for (int i = 1; i <= 100; i++) { Node *n = malloc(sizeof(Node)); n->val = i; n->next = head; head = n; } long s = 0; while (head) { s += head->val; head = head->next; } return s;",
    ),
    "5050",
  );
});

test("function pointers and callbacks", () => {
  assert.equal(
    text(
      "int add(int a, int b){return a+b;} int mul(int a, int b){return a*b;} int (*op)(int, int) = add; int r = op(2, 3); op = mul; return r * 100 + op(2, 3);",
    ),
    "506",
  );
  assert.equal(
    text(
      "int sq(int x){return x*x;} int apply(int (*f)(int), int v){return f(v);} return apply(sq, 7);",
    ),
    "49",
  );
  assert.equal(
    text(
      "int a(void){return 1;} int b(void){return 2;} int (*t[2])(void) = {a, b}; return t[0]() * 10 + t[1]();",
    ),
    "12",
  );
  assert.equal(
    text(
      "int cmp(const void *a, const void *b){ return *(const int*)a - *(const int*)b; } int v[6] = {5, 2, 9, 1, 7, 3}; qsort(v, 6, sizeof(int), cmp); return v[0]*100000 + v[1]*10000 + v[2]*1000 + v[3]*100 + v[4]*10 + v[5];",
    ),
    "123579",
  );
});
