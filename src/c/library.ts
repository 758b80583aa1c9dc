// The C standard library as Ruffian provides it: which functions are wasm instructions, which
// are host imports (I/O, allocator, transcendental math) and which are written in C below and
// compiled into a module only when a program uses them.

/** Functions compiled to a single wasm instruction sequence at the call site. */
export const INLINE_FUNCTIONS = new Set([
  "sqrt",
  "fabs",
  "floor",
  "ceil",
  "trunc",
  "fmin",
  "fmax",
  "sqrtf",
  "fabsf",
  "memset",
  "memcpy",
  "memmove",
  "labs",
  "llabs",
  "abs",
  "assert",
  "exit",
  "__memory_size",
  "__memory_grow",
]);

/** Where the allocator keeps its state inside VM memory (in the unused low page): the heap
 * top, the bytes in use, a list of freed large blocks and one free list per power-of-two class. */
export const HEAP_STATE_ADDR = 512;
export const HEAP_TOP = 0;
export const HEAP_IN_USE = 1;

/** Declarations of everything the host implements or the code generator inlines. */
export const HOST_DECLARATIONS = `
int printf(const char *fmt, ...);
int sprintf(char *buf, const char *fmt, ...);
int snprintf(char *buf, unsigned long n, const char *fmt, ...);
int vprintf(const char *fmt, char *ap);
int vsprintf(char *buf, const char *fmt, char *ap);
int vsnprintf(char *buf, unsigned long n, const char *fmt, char *ap);
int puts(const char *s);
int putchar(int c);
int getchar(void);
int __memory_size(void);
int __memory_grow(int pages);
int rand(void);
void srand(unsigned int seed);
int time(void *t);
int clock(void);
void exit(int code);
void assert(int cond);
int abs(int x);
long labs(long x);
long long llabs(long long x);
double sqrt(double x);
double fabs(double x);
double floor(double x);
double ceil(double x);
double trunc(double x);
double fmin(double a, double b);
double fmax(double a, double b);
float sqrtf(float x);
float fabsf(float x);
double pow(double x, double y);
double exp(double x);
double exp2(double x);
double log(double x);
double log10(double x);
double log2(double x);
double sin(double x);
double cos(double x);
double tan(double x);
double asin(double x);
double acos(double x);
double atan(double x);
double atan2(double y, double x);
double sinh(double x);
double cosh(double x);
double tanh(double x);
double fmod(double x, double y);
double round(double x);
double hypot(double x, double y);
double cbrt(double x);
float powf(float x, float y);
float expf(float x);
float logf(float x);
float sinf(float x);
float cosf(float x);
float floorf(float x);
float ceilf(float x);
float roundf(float x);
float fmodf(float x, float y);
double atof(const char *s);
double strtod(const char *s, char **end);
void *memset(void *p, int c, unsigned long n);
void *memcpy(void *d, const void *s, unsigned long n);
void *memmove(void *d, const void *s, unsigned long n);
`;

/** Host-implemented functions: every declaration above that is neither inline nor in C. */
export const HOST_FUNCTIONS = new Set(
  [...HOST_DECLARATIONS.matchAll(/\b([a-z_0-9]+)\(/g)]
    .map((m) => m[1]!)
    .filter((n) => !INLINE_FUNCTIONS.has(n)),
);

/** string.h, ctype.h and the rest of stdlib.h, in the C dialect this compiler accepts. The
 * allocator: 8-byte headers holding the block size (low bit set while free), power-of-two
 * classes up to 1 MiB with one free list each, bigger blocks in 64 KiB steps on a first-fit
 * list; growth by memory.grow, which fails (malloc returns NULL) at the memory limit. */
export const C_LIBRARY = `
void *malloc(unsigned long n) {
  unsigned *h = (unsigned *)${HEAP_STATE_ADDR};
  if (n > 0x7fe00000UL) return 0;
  unsigned need = (unsigned)n + 8;
  unsigned size;
  int c = 0;
  if (need <= 1048576u) { c = 4; while ((1u << c) < need) c++; size = 1u << c; }
  else size = (need + 65535u) & ~65535u;
  unsigned *b;
  if (c) {
    if (h[3 + c]) { b = (unsigned *)h[3 + c]; h[3 + c] = b[1]; b[0] = size; h[1] += size; return b + 2; }
  } else {
    unsigned *prev = 0;
    for (b = (unsigned *)h[2]; b; b = (unsigned *)b[1]) {
      if ((b[0] & ~1u) >= size) {
        if (prev) prev[1] = b[1]; else h[2] = b[1];
        b[0] = b[0] & ~1u; h[1] += b[0]; return b + 2;
      }
      prev = b;
    }
  }
  unsigned p = (h[0] + 7u) & ~7u;
  unsigned end = p + size;
  if (end < p) return 0;
  unsigned have = (unsigned)__memory_size() * 65536u;
  if (end > have) {
    /* Grow by a quarter at least, so a million small mallocs cost a few dozen grows. */
    int need = (int)((end - have + 65535u) / 65536u);
    int step = __memory_size() / 4;
    if (step < 16) step = 16;
    if (need >= step || __memory_grow(step) < 0)
      if (__memory_grow(need) < 0) return 0;
  }
  h[0] = end;
  b = (unsigned *)p; b[0] = size; h[1] += size;
  return b + 2;
}
void free(void *ptr) {
  if (!ptr) return;
  unsigned *h = (unsigned *)${HEAP_STATE_ADDR};
  unsigned *b = (unsigned *)ptr - 2;
  unsigned size = b[0];
  if ((size & 1u) || size < 16u) return; /* double free or not from malloc: ignore */
  h[1] -= size;
  b[0] = size | 1u;
  if (size <= 1048576u && (size & (size - 1)) == 0) {
    int c = 4; while ((1u << c) < size) c++;
    b[1] = h[3 + c]; h[3 + c] = (unsigned)b;
  } else { b[1] = h[2]; h[2] = (unsigned)b; }
}
void *calloc(unsigned long n, unsigned long size) {
  if (size && n > 0x7fe00000UL / size) return 0;
  void *p = malloc(n * size);
  if (p) memset(p, 0, n * size);
  return p;
}
void *realloc(void *ptr, unsigned long n) {
  if (!ptr) return malloc(n);
  unsigned have = ((unsigned *)ptr - 2)[0] - 8u;
  if (n <= have) return ptr;
  void *q = malloc(n);
  if (!q) return 0;
  memcpy(q, ptr, have);
  free(ptr);
  return q;
}
unsigned long strlen(const char *s) { const char *p = s; while (*p) p++; return p - s; }
int strcmp(const char *a, const char *b) {
  while (*a && *a == *b) { a++; b++; }
  return (unsigned char)*a - (unsigned char)*b;
}
int strncmp(const char *a, const char *b, unsigned long n) {
  for (int i = 0; i < (int)n; i++) {
    int d = (unsigned char)a[i] - (unsigned char)b[i];
    if (d != 0 || a[i] == 0) return d;
  }
  return 0;
}
char *strcpy(char *d, const char *s) { char *r = d; while ((*d++ = *s++)); return r; }
char *strncpy(char *d, const char *s, unsigned long n) {
  int i = 0;
  for (; i < (int)n && s[i]; i++) d[i] = s[i];
  for (; i < (int)n; i++) d[i] = 0;
  return d;
}
char *strcat(char *d, const char *s) { char *r = d; while (*d) d++; while ((*d++ = *s++)); return r; }
char *strncat(char *d, const char *s, unsigned long n) {
  char *r = d; while (*d) d++;
  for (int i = 0; i < (int)n && s[i]; i++) *d++ = s[i];
  *d = 0; return r;
}
char *strchr(const char *s, int c) {
  for (;; s++) { if (*s == (char)c) return (char *)s; if (!*s) return 0; }
}
char *strrchr(const char *s, int c) {
  const char *r = 0;
  for (;; s++) { if (*s == (char)c) r = s; if (!*s) return (char *)r; }
}
char *strstr(const char *h, const char *n) {
  if (!*n) return (char *)h;
  for (; *h; h++) {
    int i = 0;
    while (n[i] && h[i] == n[i]) i++;
    if (!n[i]) return (char *)h;
  }
  return 0;
}
char *strdup(const char *s) {
  unsigned long n = strlen(s) + 1; char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}
int memcmp(const void *a, const void *b, unsigned long n) {
  const unsigned char *p = a; const unsigned char *q = b;
  for (int i = 0; i < (int)n; i++) if (p[i] != q[i]) return p[i] - q[i];
  return 0;
}
void *memchr(const void *s, int c, unsigned long n) {
  const unsigned char *p = s;
  for (int i = 0; i < (int)n; i++) if (p[i] == (unsigned char)c) return (void *)(p + i);
  return 0;
}
int isnan(double x) { return x != x; }
int isinf(double x) { return x == 1.0 / 0.0 || x == -1.0 / 0.0; }
int isfinite(double x) { return x == x && !isinf(x); }
int signbit(double x) { union { double d; unsigned long u; } v; v.d = x; return (int)(v.u >> 63); }
int isdigit(int c) { return c >= '0' && c <= '9'; }
int isalpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
int isalnum(int c) { return isdigit(c) || isalpha(c); }
int isspace(int c) { return c == ' ' || (c >= 9 && c <= 13); }
int isupper(int c) { return c >= 'A' && c <= 'Z'; }
int islower(int c) { return c >= 'a' && c <= 'z'; }
int isxdigit(int c) { return isdigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
int ispunct(int c) { return c > 32 && c < 127 && !isalnum(c); }
int isprint(int c) { return c >= 32 && c < 127; }
int toupper(int c) { return islower(c) ? c - 32 : c; }
int tolower(int c) { return isupper(c) ? c + 32 : c; }
long strtol(const char *s, char **end, int base) {
  const char *p = s; long v = 0; int neg = 0; int any = 0;
  while (isspace(*p)) p++;
  if (*p == '-' || *p == '+') { neg = *p == '-'; p++; }
  if ((base == 0 || base == 16) && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) { p += 2; base = 16; }
  else if (base == 0 && p[0] == '0') base = 8;
  else if (base == 0) base = 10;
  for (;; p++) {
    int d;
    if (isdigit(*p)) d = *p - '0';
    else if (*p >= 'a' && *p <= 'z') d = *p - 'a' + 10;
    else if (*p >= 'A' && *p <= 'Z') d = *p - 'A' + 10;
    else break;
    if (d >= base) break;
    v = v * base + d; any = 1;
  }
  if (end) *end = (char *)(any ? p : s);
  return neg ? -v : v;
}
unsigned long strtoul(const char *s, char **end, int base) { return (unsigned long)strtol(s, end, base); }
long long strtoll(const char *s, char **end, int base) { return strtol(s, end, base); }
int atoi(const char *s) { return (int)strtol(s, 0, 10); }
long atol(const char *s) { return strtol(s, 0, 10); }
long long atoll(const char *s) { return strtol(s, 0, 10); }
void qsort(void *base, unsigned long n, unsigned long size, int (*cmp)(const void *, const void *)) {
  char *a = base; int w = (int)size; int len = (int)n;
  char *tmp = malloc(size > 0 ? size : 1);
  if (len < 2 || !tmp) { free(tmp); return; }
  /* Shell sort with an insertion-sort finish: in place, no recursion, O(n^1.3) in practice. */
  int gap = 1;
  while (gap < len / 3) gap = gap * 3 + 1;
  for (; gap > 0; gap /= 3) {
    for (int i = gap; i < len; i++) {
      memcpy(tmp, a + i * w, w);
      int j = i;
      while (j >= gap && cmp(a + (j - gap) * w, tmp) > 0) { memcpy(a + j * w, a + (j - gap) * w, w); j -= gap; }
      memcpy(a + j * w, tmp, w);
    }
  }
  free(tmp);
}
void *bsearch(const void *key, const void *base, unsigned long n, unsigned long size, int (*cmp)(const void *, const void *)) {
  const char *a = base; int lo = 0; int hi = (int)n - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2; int c = cmp(key, a + mid * (int)size);
    if (c == 0) return (void *)(a + mid * (int)size);
    if (c < 0) hi = mid - 1; else lo = mid + 1;
  }
  return 0;
}
`;
