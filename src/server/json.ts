// JSON for response bodies that may hold BigInt values (VM outcomes of 64-bit results): the fast
// JSON.stringify first, a BigInt-aware replacer only when a body needs it.
const bigintAsString = (_k: string, v: unknown): unknown =>
  typeof v === "bigint" ? v.toString() : v;

export function toJson(body: unknown): string {
  try {
    return JSON.stringify(body);
  } catch (err) {
    if (!(err instanceof TypeError)) throw err;
    return JSON.stringify(body, bigintAsString);
  }
}
