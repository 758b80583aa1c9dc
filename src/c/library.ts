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
  "__builtin_popcount",
  "__builtin_popcountl",
  "__builtin_popcountll",
  "__builtin_clz",
  "__builtin_clzl",
  "__builtin_clzll",
  "__builtin_ctz",
  "__builtin_ctzl",
  "__builtin_ctzll",
]);

/** Where the allocator keeps its state inside VM memory (in the unused low page): the heap
 * top, the bytes in use, a list of freed large blocks and one free list per power-of-two class. */
export const HEAP_STATE_ADDR = 512;
export const HEAP_TOP = 0;
export const HEAP_IN_USE = 1;
/** Where the in-memory file table's address lives (0 until the first fopen). */
export const FILE_TABLE_ADDR = 1000;

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
double expm1(double x);
double log1p(double x);
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
int __builtin_popcount(unsigned x);
int __builtin_popcountl(unsigned long x);
int __builtin_popcountll(unsigned long long x);
int __builtin_clz(unsigned x);
int __builtin_clzl(unsigned long x);
int __builtin_clzll(unsigned long long x);
int __builtin_ctz(unsigned x);
int __builtin_ctzl(unsigned long x);
int __builtin_ctzll(unsigned long long x);
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
/* stdio streams: stdin, stdout and stderr are the handles 0, 1 and 2 (both outputs go to the
   program's output); fopen opens in-memory files that live as long as the VM's memory, never
   the host's file system. A stream is a malloc'd {file, pos, mode}; a file {data, len, cap}. */
struct __rf_file { char *data; unsigned long len; unsigned long cap; char *name; };
struct __rf_stream { struct __rf_file *f; unsigned long pos; int mode; int eof; };
struct __rf_file *__rf_lookup(const char *name, int create) {
  struct __rf_file **table = *(struct __rf_file ***)${FILE_TABLE_ADDR};
  if (!table) {
    table = calloc(64, sizeof(struct __rf_file *));
    if (!table) return 0;
    *(struct __rf_file ***)${FILE_TABLE_ADDR} = table;
  }
  int i;
  for (i = 0; i < 64 && table[i]; i++) if (strcmp(table[i]->name, name) == 0) return table[i];
  if (!create || i == 64) return 0;
  struct __rf_file *f = calloc(1, sizeof(struct __rf_file));
  if (!f) return 0;
  f->name = strdup(name);
  table[i] = f;
  return f;
}
FILE *fopen(const char *name, const char *mode) {
  struct __rf_file *f = __rf_lookup(name, mode[0] != 'r');
  if (!f) return 0;
  struct __rf_stream *s = calloc(1, sizeof(struct __rf_stream));
  if (!s) return 0;
  s->f = f; s->mode = mode[0];
  if (mode[0] == 'w') f->len = 0;
  if (mode[0] == 'a') s->pos = f->len;
  return (FILE *)s;
}
int fclose(FILE *stream) { if ((unsigned long)stream > 2) free(stream); return 0; }
int fflush(FILE *stream) { return 0; }
unsigned long fwrite(const void *p, unsigned long size, unsigned long n, FILE *stream) {
  unsigned long bytes = size * n;
  if ((unsigned long)stream == 1 || (unsigned long)stream == 2) {
    const char *c = p;
    for (unsigned long i = 0; i < bytes; i++) putchar(c[i]);
    return n;
  }
  struct __rf_stream *s = (struct __rf_stream *)stream;
  if (!s || s->mode == 'r') return 0;
  struct __rf_file *f = s->f;
  if (s->pos + bytes > f->cap) {
    unsigned long cap = (s->pos + bytes) * 2 + 16;
    char *d = realloc(f->data, cap);
    if (!d) return 0;
    f->data = d; f->cap = cap;
  }
  memcpy(f->data + s->pos, p, bytes);
  s->pos += bytes;
  if (s->pos > f->len) f->len = s->pos;
  return n;
}
unsigned long fread(void *p, unsigned long size, unsigned long n, FILE *stream) {
  struct __rf_stream *s = (struct __rf_stream *)stream;
  if ((unsigned long)stream <= 2 || size == 0) return 0;
  unsigned long have = s->f->len - s->pos;
  unsigned long items = have / size < n ? have / size : n;
  memcpy(p, s->f->data + s->pos, items * size);
  s->pos += items * size;
  if (items < n) s->eof = 1;
  return items;
}
int fgetc(FILE *stream) {
  struct __rf_stream *s = (struct __rf_stream *)stream;
  if ((unsigned long)stream <= 2) return -1;
  if (s->pos >= s->f->len) { s->eof = 1; return -1; }
  return (unsigned char)s->f->data[s->pos++];
}
int getc(FILE *stream) { return fgetc(stream); }
char *fgets(char *buf, int n, FILE *stream) {
  int i = 0;
  while (i < n - 1) {
    int c = fgetc(stream);
    if (c < 0) break;
    buf[i++] = (char)c;
    if (c == 10) break;
  }
  if (i == 0) return 0;
  buf[i] = 0;
  return buf;
}
int feof(FILE *stream) { return (unsigned long)stream > 2 && ((struct __rf_stream *)stream)->eof; }
int fputc(int c, FILE *stream) { char ch = (char)c; return fwrite(&ch, 1, 1, stream) == 1 ? (unsigned char)c : -1; }
int putc(int c, FILE *stream) { return fputc(c, stream); }
int fputs(const char *str, FILE *stream) { fwrite(str, 1, strlen(str), stream); return 1; }
int vfprintf(FILE *stream, const char *fmt, va_list ap) {
  if ((unsigned long)stream == 1 || (unsigned long)stream == 2) return vprintf(fmt, ap);
  int n = vsnprintf(0, 0, fmt, ap);
  char *tmp = malloc(n + 1);
  if (!tmp) return -1;
  vsnprintf(tmp, n + 1, fmt, ap);
  fwrite(tmp, 1, n, stream);
  free(tmp);
  return n;
}
int fprintf(FILE *stream, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vfprintf(stream, fmt, ap);
  va_end(ap);
  return n;
}
unsigned long strspn(const char *s, const char *accept) {
  unsigned long n = 0;
  while (s[n] && strchr(accept, s[n])) n++;
  return n;
}
unsigned long strcspn(const char *s, const char *reject) {
  unsigned long n = 0;
  while (s[n] && !strchr(reject, s[n])) n++;
  return n;
}
char *strpbrk(const char *s, const char *accept) {
  s += strcspn(s, accept);
  return *s ? (char *)s : 0;
}
char *strtok_r(char *s, const char *delim, char **save) {
  if (!s) s = *save;
  if (!s) return 0;
  s += strspn(s, delim);
  if (!*s) { *save = 0; return 0; }
  char *end = s + strcspn(s, delim);
  if (*end) { *end = 0; *save = end + 1; } else *save = 0;
  return s;
}
char *strtok(char *s, const char *delim) {
  /* The saved position lives in the low page, next to the file table pointer. */
  return strtok_r(s, delim, (char **)${FILE_TABLE_ADDR + 8});
}
typedef struct { int quot; int rem; } div_t;
typedef struct { long quot; long rem; } ldiv_t;
div_t div(int a, int b) { div_t r; r.quot = a / b; r.rem = a % b; return r; }
ldiv_t ldiv(long a, long b) { ldiv_t r; r.quot = a / b; r.rem = a % b; return r; }
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
