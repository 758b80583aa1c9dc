// Library functions model-written C uses (gcc-checked outputs): strtok, strspn/strcspn, div/ldiv,
// __func__, __builtin_popcount/clz/ctz, PRId64, offsetof, fprintf to stdout/stderr, and
// in-memory files through fopen/fwrite/fread/fgets.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ok } from "./helpers.js";

test("string, stdlib, builtin and inttypes functions print what gcc prints", () => {
  const src =
    '#include <stdio.h>\n#include <string.h>\n#include <stdlib.h>\n#include <stddef.h>\n#include <inttypes.h>\nstruct P { char c; long x; int y; };\nint main(void) {\n  char s[] = "a,b;;c";\n  for (char *t = strtok(s, ",;"); t; t = strtok(NULL, ",;")) printf("[%s]", t);\n  printf(" %lu %lu\\n", strspn("abcde", "abc"), strcspn("abcde", "dc"));\n  div_t d = div(17, 5); ldiv_t l = ldiv(-17L, 5L);\n  printf("%d %d %ld %ld\\n", d.quot, d.rem, l.quot, l.rem);\n  printf("%s %d %d %d %d\\n", __func__, __builtin_popcount(255u), __builtin_clz(1u), __builtin_ctz(8u), __builtin_popcountl(-1L));\n  int64_t big = 1234567890123LL;\n  printf("%" PRId64 " %zu %zu\\n", big, offsetof(struct P, x), sizeof(struct P));\n  fprintf(stdout, "out %d\\n", 1);\n  return 0;\n}\n';
  assert.equal(
    ok(src).stdout,
    "[a][b][c] 3 2\n3 2 -3 -2\nmain 8 31 3 64\n1234567890123 8 24\nout 1\n",
  );
});

test("fopen works on in-memory files: write, reread, append, missing file", () => {
  const src = `#include <stdio.h>
int main() {
  FILE *f = fopen("notes.txt", "w");
  fprintf(f, "one %d\\n", 1);
  fputs("two\\n", f);
  fclose(f);
  f = fopen("notes.txt", "a");
  fwrite("three\\n", 1, 6, f);
  fclose(f);
  char line[32];
  f = fopen("notes.txt", "r");
  while (fgets(line, sizeof line, f)) printf("> %s", line);
  printf("eof %d, missing %d\\n", feof(f), fopen("nope.txt", "r") == NULL);
  fclose(f);
  fprintf(stderr, "to stderr\\n");
  return 0;
}`;
  assert.equal(ok(src).stdout, "> one 1\n> two\n> three\neof 1, missing 1\nto stderr\n");
});

test("fmin and fmax ignore a NaN operand, as C says (wasm's min/max would return NaN)", () => {
  const src = `#include <math.h>
printf("%g %g %g %g %g", fmax(NAN, 1.0), fmin(2.0, NAN), fmax(3.0, 4.0), fmin(-1.0, 5.0), fmax(NAN, NAN));`;
  assert.equal(ok(src).stdout, "1 2 4 -1 nan");
});
