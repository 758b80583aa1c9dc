// Never-seen C blocks for memory measurements: each index gives different source and module
// bytes (a loop bound, constants and a string literal), like the regions a model writes.
export function neverSeenProgram(i: number): string {
  return `long s = 0; for (int k = 0; k < ${(i % 50) + 10}; k++) s += k * ${i}; printf("%ld %s\\n", s, "v${i}");`;
}
