// The host side of the C library: output (printf family, puts, putchar) into a capped buffer,
// transcendental math as glibc computes it (math/libm.ts), strtod and a deterministic rand. Nothing here touches the host
// system: no files, clock or network.
import { formatPrintf } from "./format.js";
import * as libm from "./math/libm.js";
import type { VmMemory } from "./memory.js";

/** stdout of one run, cut at the output limit. */
export class OutputBuffer {
  private chunks: number[] = [];
  truncated = false;
  constructor(private readonly max: number) {}
  get length(): number {
    return this.chunks.length;
  }
  write(bytes: ArrayLike<number>): void {
    const room = this.max - this.chunks.length;
    if (bytes.length > room) this.truncated = true;
    const n = Math.min(room, bytes.length);
    for (let i = 0; i < n; i++) this.chunks.push(bytes[i]!);
  }
  text(): string {
    // Most hook calls print nothing: no Buffer for them.
    if (this.chunks.length === 0) return "";
    return Buffer.from(this.chunks).toString("utf8");
  }
}

/** Parses the longest prefix of `s` that is a C floating-point number; returns [value, length]. */
function parseDoublePrefix(s: string): [number, number] {
  const m =
    /^\s*[+-]?(?:inf(?:inity)?|nan|0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)/i.exec(
      s,
    );
  if (!m) return [0, 0];
  const text = m[0].trim().toLowerCase();
  let v: number;
  if (text.includes("inf")) v = text.startsWith("-") ? -Infinity : Infinity;
  else if (text.includes("nan")) v = NaN;
  else if (text.includes("0x"))
    v = (text.startsWith("-") ? -1 : 1) * parseInt(text.replace(/^[+-]?0x/, ""), 16);
  else v = Number(text);
  return [v, m[0].length];
}

export interface HostState {
  mem: VmMemory;
  out: OutputBuffer;
  rngState: number;
  /** Bills host-side work (bytes formatted) against the instruction budget and the clock. */
  charge(units: number): void;
}

/** The `host` import namespace; the module imports only the entries it uses. */
export function hostLibrary(st: HostState): Record<string, (...a: number[]) => number | void> {
  const { mem } = st;
  const writeFormatted = (buf: number, cap: number, bytes: number[]): void => {
    const n = Math.min(bytes.length, Math.max(cap - 1, 0));
    if (cap <= 0) return;
    const u8 = mem.u8;
    if (buf < 0 || buf + n + 1 > u8.length) throw new RangeError("memory access out of bounds");
    for (let i = 0; i < n; i++) u8[buf + i] = bytes[i]!;
    u8[buf + n] = 0;
  };
  return {
    printf(fmt, args) {
      const bytes = formatPrintf(mem, fmt!, args!);
      st.charge(bytes.length);
      st.out.write(bytes);
      return bytes.length;
    },
    sprintf(buf, fmt, args) {
      const bytes = formatPrintf(mem, fmt!, args!);
      st.charge(bytes.length);
      writeFormatted(buf!, bytes.length + 1, bytes);
      return bytes.length;
    },
    snprintf(buf, n, fmt, args) {
      const bytes = formatPrintf(mem, fmt!, args!);
      st.charge(bytes.length);
      writeFormatted(buf!, Math.min(n!, 1 << 30), bytes);
      return bytes.length;
    },
    vprintf(fmt, ap) {
      const bytes = formatPrintf(mem, fmt!, ap!);
      st.charge(bytes.length);
      st.out.write(bytes);
      return bytes.length;
    },
    vsprintf(buf, fmt, ap) {
      const bytes = formatPrintf(mem, fmt!, ap!);
      st.charge(bytes.length);
      writeFormatted(buf!, bytes.length + 1, bytes);
      return bytes.length;
    },
    vsnprintf(buf, n, fmt, ap) {
      const bytes = formatPrintf(mem, fmt!, ap!);
      st.charge(bytes.length);
      writeFormatted(buf!, Math.min(n!, 1 << 30), bytes);
      return bytes.length;
    },
    puts(s) {
      const bytes = mem.readCBytes(s!);
      st.charge(bytes.length);
      st.out.write(bytes);
      st.out.write([10]);
      return 1;
    },
    putchar(c) {
      st.out.write([c! & 0xff]);
      return c! & 0xff;
    },
    getchar: () => -1,
    rand() {
      // glibc's TYPE_0 generator: deterministic, the same sequence on every run.
      st.rngState = (Math.imul(st.rngState, 1103515245) + 12345) & 0x7fffffff;
      return st.rngState;
    },
    srand(seed) {
      st.rngState = seed! >>> 0;
    },
    time: () => 0,
    clock: () => 0,
    pow: (x, y) => libm.pow(x!, y!),
    exp: (x) => libm.exp(x!),
    exp2: (x) => libm.exp2(x!),
    expm1: Math.expm1,
    log: (x) => libm.log(x!),
    log10: (x) => libm.log10(x!),
    log2: (x) => libm.log2(x!),
    log1p: Math.log1p,
    sin: (x) => libm.sin(x!),
    cos: (x) => libm.cos(x!),
    tan: (x) => libm.tan(x!),
    asin: (x) => libm.asin(x!),
    acos: (x) => libm.acos(x!),
    atan: (x) => libm.atan(x!),
    atan2: (y, x) => libm.atan2(y!, x!),
    sinh: (x) => libm.sinh(x!),
    cosh: (x) => libm.cosh(x!),
    tanh: Math.tanh,
    fmod: (x, y) => x! % y!,
    round: (x) => Math.sign(x!) * Math.round(Math.abs(x!)),
    hypot: (x, y) => libm.hypot(x!, y!),
    cbrt: (x) => libm.cbrt(x!),
    // The float functions round the double result once more, at the wasm f32 boundary.
    powf: (x, y) => libm.pow(x!, y!),
    expf: (x) => libm.exp(x!),
    logf: (x) => libm.log(x!),
    sinf: (x) => libm.sin(x!),
    cosf: (x) => libm.cos(x!),
    floorf: Math.floor,
    ceilf: Math.ceil,
    roundf: (x) => Math.sign(x!) * Math.round(Math.abs(x!)),
    fmodf: (x, y) => x! % y!,
    atof: (s) => parseDoublePrefix(mem.readCString(s!))[0],
    strtod(s, end) {
      const [v, len] = parseDoublePrefix(mem.readCString(s!));
      if (end) mem.dv.setBigUint64(end, BigInt(s! + len), true);
      return v;
    },
  };
}
