// JSON for bodies that may hold BigInt values (VM outcomes of 64-bit results), written as decimal
// strings: the fast JSON.stringify first, a BigInt-aware replacer only when a body needs it. Used
// by the server's responses and the CLI's --json/--events output.
const bigintAsString = (_k: string, v: unknown): unknown =>
  typeof v === "bigint" ? v.toString() : v;

export function toJson(body: unknown, indent?: number): string {
  try {
    return JSON.stringify(body, null, indent);
  } catch (err) {
    if (!(err instanceof TypeError)) throw err;
    return JSON.stringify(body, bigintAsString, indent);
  }
}
