// Generates the robustness run's inputs from a seed: random token soup, truncated and mutated
// corpus programs, and hand-picked extremes (deep nesting, huge literals, traps, endless loops).
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../../src/paths.js";

export interface RobustnessCase {
  label: string;
  source: string;
}

/** mulberry32: tiny, fast and identical on every platform, so a seed names one exact run. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const VOCABULARY = [
  "int",
  "long",
  "char",
  "short",
  "unsigned",
  "signed",
  "double",
  "float",
  "void",
  "struct",
  "union",
  "enum",
  "typedef",
  "const",
  "static",
  "extern",
  "sizeof",
  "return",
  "if",
  "else",
  "while",
  "for",
  "do",
  "switch",
  "case",
  "default",
  "break",
  "continue",
  "goto",
  "main",
  "x",
  "y",
  "n",
  "f",
  "a",
  "p",
  "s",
  "printf",
  "malloc",
  "free",
  "strlen",
  "memcpy",
  "qsort",
  "NULL",
  "0",
  "1",
  "42",
  "-1",
  "2147483647",
  "4294967296",
  "0x7fffffff",
  "1e308",
  "3.14",
  "'a'",
  "'\\n'",
  '"%d\\n"',
  '"%s"',
  '"hello"',
  "(",
  ")",
  "{",
  "}",
  "[",
  "]",
  ";",
  ",",
  ".",
  "->",
  "+",
  "-",
  "*",
  "/",
  "%",
  "=",
  "==",
  "!=",
  "<",
  ">",
  "<=",
  ">=",
  "<<",
  ">>",
  "&",
  "|",
  "^",
  "~",
  "!",
  "&&",
  "||",
  "?",
  ":",
  "++",
  "--",
  "+=",
  "-=",
  "*=",
  "/=",
  "%=",
  "<<=",
  ">>=",
  "&=",
  "|=",
  "^=",
  "...",
  "#",
  "##",
  "#define",
  "#include",
  "#if",
  "#endif",
  "#ifdef",
  "\n",
  "\\",
  "/*",
  "*/",
  "//",
  '"',
  "'",
  "@",
  "$",
  "`",
];

const TOKEN_PATTERN =
  /\s+|[A-Za-z_]\w*|\d[\w.]*|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|->|\+\+|--|<<=?|>>=?|[<>=!&|^+\-*/%]=|&&|\|\||\S/g;

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

function corpusSources(): { name: string; source: string }[] {
  const dir = join(packageRoot, "test", "fixtures", "c", "programs");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".c"))
    .sort()
    .map((f) => ({ name: f.slice(0, -2), source: readFileSync(join(dir, f), "latin1") }));
}

function tokenSoup(random: () => number, count: number): RobustnessCase[] {
  const cases: RobustnessCase[] = [];
  for (let i = 0; i < count; i++) {
    const length = 1 + Math.floor(random() * 80);
    const parts: string[] = [];
    for (let k = 0; k < length; k++) parts.push(pick(random, VOCABULARY));
    cases.push({ label: `soup#${i}`, source: parts.join(random() < 0.7 ? " " : "") });
  }
  return cases;
}

/** Every program cut at `cuts` evenly spaced byte offsets (the k-th byte for k = length/cuts). */
function truncations(programs: { name: string; source: string }[], cuts: number): RobustnessCase[] {
  const cases: RobustnessCase[] = [];
  for (const { name, source } of programs) {
    const step = Math.max(1, Math.ceil(source.length / cuts));
    for (let at = step; at < source.length; at += step)
      cases.push({ label: `truncate ${name}@${at}`, source: source.slice(0, at) });
  }
  return cases;
}

type Mutation = "delete" | "duplicate" | "swap" | "replace";

function mutate(random: () => number, source: string, mutation: Mutation): string {
  const tokens = source.match(TOKEN_PATTERN) ?? [source];
  const solid = tokens.map((t, i) => ({ t, i })).filter(({ t }) => t.trim() !== "");
  if (solid.length < 2) return source;
  const edits = 1 + Math.floor(random() * 3);
  for (let e = 0; e < edits; e++) {
    const a = pick(random, solid).i;
    const b = pick(random, solid).i;
    if (mutation === "delete") tokens[a] = "";
    else if (mutation === "duplicate") tokens[a] = `${tokens[a]} ${tokens[a]}`;
    else if (mutation === "swap")
      [tokens[a], tokens[b]] = [tokens[b] as string, tokens[a] as string];
    else tokens[a] = pick(random, VOCABULARY);
  }
  return tokens.join("");
}

function mutations(
  random: () => number,
  programs: { name: string; source: string }[],
  count: number,
): RobustnessCase[] {
  const kinds: Mutation[] = ["delete", "duplicate", "swap", "replace"];
  const cases: RobustnessCase[] = [];
  for (let i = 0; i < count; i++) {
    const program = pick(random, programs);
    const kind = pick(random, kinds);
    cases.push({
      label: `${kind}#${i} ${program.name}`,
      source: mutate(random, program.source, kind),
    });
  }
  return cases;
}

function randomBytes(random: () => number, count: number): RobustnessCase[] {
  const cases: RobustnessCase[] = [];
  for (let i = 0; i < count; i++) {
    let s = "";
    const length = Math.floor(random() * 120);
    for (let k = 0; k < length; k++) s += String.fromCharCode(Math.floor(random() * 256));
    cases.push({ label: `bytes#${i}`, source: s });
  }
  return cases;
}

const main = (body: string) => `int main() { ${body} }`;

/** Inputs chosen to hit each defence: parser depth, literal range, memory, stack, time, output. */
export function extremeCases(): RobustnessCase[] {
  const deep = 10_000;
  const list: [string, string][] = [
    ["10k nested parens (expression)", `${"(".repeat(deep)}1${")".repeat(deep)}`],
    ["10k nested parens (return)", `return ${"(".repeat(deep)}1${")".repeat(deep)};`],
    ["10k unclosed parens", `return ${"(".repeat(deep)}1;`],
    ["10k nested blocks", main(`${"{".repeat(deep)}${"}".repeat(deep)} return 0;`)],
    ["10k unclosed blocks", main(`${"{".repeat(deep)} return 0;`)],
    ["10k nested ifs", main(`int x = 1; ${"if (x) ".repeat(deep)}x = 2; return x;`)],
    [
      "10k nested else-ifs",
      main(`int x = 1; ${"if (x == 0) x = 0; else ".repeat(deep)}x = 2; return x;`),
    ],
    ["10k nested whiles", main(`int i = 0; ${"while (i < 1) ".repeat(deep)}i++; return i;`)],
    ["10k unary minus", `return ${"- ".repeat(deep)}1;`],
    ["10k logical not", `return ${"!".repeat(deep)}1;`],
    ["10k casts", `return ${"(int)".repeat(deep)}1;`],
    ["10k nested ternaries", `return ${"1 ? ".repeat(deep)}1${" : 0".repeat(deep)};`],
    [
      "10k nested calls",
      `int f(int x) { return x; } ${main(`return ${"f(".repeat(deep)}1${")".repeat(deep)};`)}`,
    ],
    [
      "10k nested subscripts",
      `int a[1]; ${main(`return ${"a[".repeat(deep)}0${"]".repeat(deep)};`)}`,
    ],
    [
      "10k nested struct declarations",
      `${"struct s { ".repeat(1000)}int x;${" } m;".repeat(1000)} ${main("return 0;")}`,
    ],
    [
      "2k nested switches",
      main(
        `int x = 0; ${"switch (x) { case 0: ".repeat(2000)}x = 7;${" }".repeat(2000)} return x;`,
      ),
    ],
    [
      "10k nested #if",
      `${"#if 1\n".repeat(deep)}int main() { return 0; }\n${"#endif\n".repeat(deep)}`,
    ],
    ["20k-term sum", `return ${"1+".repeat(20_000)}1;`],
    ["20k statements", main(`int x = 0; ${"x++; ".repeat(20_000)}return x;`)],
    [
      "5k functions",
      `${Array.from({ length: 5000 }, (_, i) => `int f${i}(int x) { return x + ${i}; }`).join("\n")}\n${main("return f4999(1);")}`,
    ],
    ["array size 1e400", "char x[1e400];"],
    ["enumerator 1e400", "enum { A = 1e400 }; return A;"],
    ["case 1e400", main("int x = 1; switch (x) { case 1e400: return 1; } return 0;")],
    ["negative designator", "int g[2] = {[-1] = 7}; return g[0];"],
    ["printf precision 101", 'printf("%.101f", 1.0);'],
    ["printf precision 5000", 'printf("%.5000f %.400e", 1e-300, 2.5);'],
    ["deep recursion", "int f(int n) { return n ? f(n - 1) + 1 : 0; } return f(10000000);"],
    ["signed overflow", "int x = 2147483647; return x + 1;"],
    ["decimal literal too big", `return 99999999999999999999999999999999999;`],
    ["1000-digit hex literal", `return 0x${"f".repeat(1000)};`],
    ["100k-digit literal", `return ${"9".repeat(100_000)};`],
    ["double overflow literal", main(`double d = 1e999999; return d > 0;`)],
    ["double underflow literal", main(`double d = 1e-999999; return d == 0;`)],
    ["octal escape out of range", `return '\\777';`],
    ["long hex escape", main(`char *s = "\\x${"f".repeat(100)}"; return s[0];`)],
    ["multi-char constant", `return 'abcdefgh';`],
    [
      "100k-char identifier",
      main(`int ${"v".repeat(100_000)} = 3; return ${"v".repeat(100_000)};`),
    ],
    ["global int[1e9]", `int a[1000000000]; ${main("a[5] = 1; return a[5];")}`],
    ["local int[1e9]", main("int a[1000000000]; a[999999999] = 1; return a[0];")],
    ["char[2^32]", `char a[4294967296]; ${main("return a[0];")}`],
    ["long[2^62]", `long a[1L << 62]; ${main("return 0;")}`],
    ["negative array size", main("int a[-1]; return 0;")],
    ["VLA of 2^31", main("int n = 2147483647; int a[n]; a[n - 1] = 1; return a[n - 1];")],
    [
      "malloc 2GB and write",
      `#include <stdlib.h>\n${main("char *p = malloc(2000000000); if (!p) return 1; p[1999999999] = 1; return 0;")}`,
    ],
    ["malloc(-1)", `#include <stdlib.h>\n${main("char *p = malloc(-1); return p == 0;")}`],
    [
      "calloc overflow",
      `#include <stdlib.h>\n${main("char *p = calloc(1 << 30, 1 << 30); return p == 0;")}`,
    ],
    [
      "malloc until exhausted",
      `#include <stdlib.h>\n${main("long n = 0; while (malloc(1 << 20)) n++; return n > 0;")}`,
    ],
    [
      "1MB string literal",
      `#include <string.h>\n${main(`return (int)strlen("${"a".repeat(1 << 20)}");`)}`,
    ],
    ["10k concatenated literals", main(`char *s = ${'"ab" '.repeat(deep)}; return s[0];`)],
    ["unbounded recursion", `int f(int n) { return f(n + 1) + 1; } ${main("return f(0);")}`],
    [
      "recursion with big frames",
      `int f(int n) { char buf[100000]; buf[n % 100000] = (char)n; return f(n + 1) + buf[0]; } ${main("return f(0);")}`,
    ],
    ["recursive main", `int main() { return main(); }`],
    [
      "mutual recursion",
      `int g(int n); int f(int n) { return g(n + 1); } int g(int n) { return f(n + 1); } ${main("return f(0);")}`,
    ],
    [
      "million-deep finite recursion",
      `long depth(long n) { return n == 0 ? 0 : 1 + depth(n - 1); } ${main("return (int)depth(1000000);")}`,
    ],
    ["while(1)", main("while (1); return 0;")],
    ["for(;;) continue", main("for (;;) continue; return 0;")],
    ["do while(1)", main("do { } while (1); return 0;")],
    [
      "busy loop with work",
      main("unsigned x = 1; while (1) { x = x * 1103515245u + 12345u; } return 0;"),
    ],
    ["64-bit count up", main("long i = 0; while (i >= 0) i++; return 0;")],
    ["infinite loop in expression form", `int spin(void) { for (;;); return 1; } return spin();`],
    ["goto loop", main("l: goto l; return 0;")],
    [
      "printf forever",
      `#include <stdio.h>\n${main('while (1) printf("spam spam spam\\n"); return 0;')}`,
    ],
    ["putchar forever", `#include <stdio.h>\n${main("for (;;) putchar('x'); return 0;")}`],
    ["huge width", `#include <stdio.h>\n${main('printf("%999999999d", 1); return 0;')}`],
    ["huge precision", `#include <stdio.h>\n${main('printf("%.999999f", 1.0); return 0;')}`],
    ["lone percent", `#include <stdio.h>\n${main('printf("%"); return 0;')}`],
    ["%n", `#include <stdio.h>\n${main('int n; printf("abc%n", &n); return n;')}`],
    ["%s given int", `#include <stdio.h>\n${main('printf("%s", 5); return 0;')}`],
    ["missing printf args", `#include <stdio.h>\n${main('printf("%d %s %f %c"); return 0;')}`],
    [
      "unknown conversions",
      `#include <stdio.h>\n${main('printf("%q %Lf %z %k", 1, 2.0); return 0;')}`,
    ],
    ["printf(NULL)", `#include <stdio.h>\n${main("printf(0); return 0;")}`],
    [
      "sprintf overflow",
      `#include <stdio.h>\n${main(`char b[4]; sprintf(b, "%s", "${"x".repeat(100_000)}"); return b[0];`)}`,
    ],
    ["division by zero", main("int z = 0; return 5 / z;")],
    ["modulo by zero", main("int z = 0; return 5 % z;")],
    ["constant division by zero", `return 1 / 0;`],
    ["INT_MIN / -1", main("int m = -2147483647 - 1; int d = -1; return m / d;")],
    [
      "LONG_MIN % -1",
      main("long m = -9223372036854775807L - 1; long d = -1; return (int)(m % d);"),
    ],
    ["double to int overflow", main("double d = 1e300 * 1e300; return (int)d;")],
    ["NaN to int", main("double z = 0; double n = z / z; return (int)n;")],
    ["null dereference", main("int *p = 0; return *p;")],
    ["wild read", main("int *p = (int *)0x7ffffff0; return *p;")],
    ["negative pointer write", main("int *p = (int *)-4; *p = 1; return 0;")],
    ["stack smash", main("char b[4]; for (int i = 0; i < 100000000; i++) b[i] = 0; return b[0];")],
    [
      "double free",
      `#include <stdlib.h>\n${main("char *p = malloc(10); free(p); free(p); return 0;")}`,
    ],
    ["free wild pointer", `#include <stdlib.h>\n${main("free((void *)12345); return 0;")}`],
    ["memcpy 1GB", `#include <string.h>\n${main("memcpy(0, 0, 1000000000); return 0;")}`],
    [
      "memset 4GB",
      `#include <string.h>\n${main("memset((void *)16, 0, 4000000000UL); return 0;")}`,
    ],
    ["strlen(NULL)", `#include <string.h>\n${main("return (int)strlen((char *)0);")}`],
    ["call null function pointer", main("int (*f)(void) = 0; return f();")],
    ["call wild function pointer", main("int (*f)(void) = (int (*)(void))12345; return f();")],
    [
      "qsort null comparator",
      `#include <stdlib.h>\n${main("int a[4] = {3, 1, 2, 0}; qsort(a, 4, sizeof a[0], 0); return a[0];")}`,
    ],
    ["exit(3)", `#include <stdlib.h>\n${main("exit(3); return 0;")}`],
    ["abort()", `#include <stdlib.h>\n${main("abort(); return 0;")}`],
    ["#include /etc/passwd", `#include "/etc/passwd"\n${main("return 0;")}`],
    ["#include missing header", `#include <no_such_header.h>\n${main("return 0;")}`],
    ["unterminated #if", `#if 1\n${main("return 0;")}`],
    ["stray #endif", `#endif\n${main("return 0;")}`],
    ["stray #else", `#else\n${main("return 0;")}`],
    ["self-referential macro", `#define a a + 1\n${main("int a = 1; return a;")}`],
    ["recursive function macro", `#define f(x) f(x) + 1\n${main("return f(1);")}`],
    ["mutually recursive macros", `#define A B\n#define B A\n${main("int A = 1; return B;")}`],
    [
      "exponential macro bomb",
      `#define X0 1\n${Array.from({ length: 40 }, (_, i) => `#define X${i + 1} (X${i} + X${i})`).join("\n")}\nreturn X40;`,
    ],
    ["macro missing arguments", `#define F(x, y) x\n${main("return F(1);")}`],
    ["macro extra arguments", `#define F(x) x\n${main("return F(1, 2, 3);")}`],
    ["#error", `#error boom\n${main("return 0;")}`],
    ["bare #", `#\n${main("return 0;")}`],
    ["backslash at end of file", `${main("return 0;")}\\`],
    ["empty source", ""],
    ["whitespace only", " \n\t \r\n  "],
    ["NUL bytes", "int main() {\0 return 0; }"],
    ["unicode identifier", main("int é = 1; return é;")],
    ["unterminated comment", `${main("return 0;")} /* never closed`],
    ["unterminated string", main('char *s = "abc; return 0;')],
    ["unterminated char", main("return 'a;")],
    ["empty char constant", main("return '';")],
    ["bad escape", main('char *s = "\\q"; return s[0];')],
    ["bare 0x", main("return 0x;")],
    ["bare exponent", main("double d = 1e; return 0;")],
    ["invalid octal", main("return 08;")],
    ["double dot number", main("double d = 1..2; return 0;")],
    ["stray @ $ `", main("int a = 1 @ 2 $ 3 ` 4; return a;")],
    ["trigraphs", `??=define X 1\n${main("return 0;")}`],
    ["undefined variable", main("return undefined_name;")],
    ["undefined function", main("return undefined_function(1);")],
    ["wrong argument count", `int f(int a, int b) { return a + b; } ${main("return f(1);")}`],
    ["assign to const", main("const int x = 1; x = 2; return x;")],
    ["missing struct member", `struct s { int a; }; ${main("struct s v; return v.b;")}`],
    ["member of int", main("int x = 0; return x.y;")],
    ["void value used", `void f(void) {} ${main("int x = f(); return x;")}`],
    ["redefinition", main("int x = 1; int x = 2; return x;")],
    ["call a non-function", main("int x = 1; return x(2);")],
    ["declared never defined", `int g(void); ${main("return g();")}`],
    ["extern never defined", `extern int ext; ${main("return ext;")}`],
    ["main with arguments", `int main(int argc, char **argv) { return argc; }`],
    ["implicit int main", `main() { return 0; }`],
    ["variadic user function", `int f(int n, ...) { return n; } ${main("return f(1, 2, 3);")}`],
    ["union", `union u { int i; float f; }; ${main("union u v; v.f = 1.0f; return v.i != 0;")}`],
    [
      "bit-fields",
      `struct b { unsigned a : 3; unsigned c : 5; }; ${main("struct b v; v.a = 9; return v.a;")}`,
    ],
    ["compound literal", main("int *p = (int[]){1, 2, 3}; return p[2];")],
    ["_Static_assert", `_Static_assert(1, "ok"); ${main("return 0;")}`],
    ["long double", main("long double x = 1.5L; return (int)x;")],
    ["__int128", main("__int128 x = 1; return (int)x;")],
    ["inline asm", main('__asm__("int3"); return 0;')],
    ["builtin trap", main("__builtin_trap(); return 0;")],
    ["fopen", `#include <stdio.h>\n${main('FILE *f = fopen("/etc/passwd", "r"); return f != 0;')}`],
    ["system()", `#include <stdlib.h>\n${main('return system("echo pwned");')}`],
    ["getchar", `#include <stdio.h>\n${main("return getchar();")}`],
    ["only a return", "return;"],
    ["only a semicolon", ";"],
    ["two mains", `int main() { return 1; } int main() { return 2; }`],
    ["K&R definition", `int f(a) int a; { return a; } ${main("return f(2);")}`],
  ];
  return list.map(([label, source]) => ({ label, source }));
}

/** The whole run for one seed, in a fixed order so a case's index names it. */
export function robustnessCases(seed: number): RobustnessCase[] {
  const random = seededRandom(seed);
  const programs = corpusSources();
  return [
    ...extremeCases(),
    ...tokenSoup(random, 900),
    ...randomBytes(random, 150),
    ...truncations(programs, 6),
    ...mutations(random, programs, 1100),
  ];
}
