// Sandbox bounds: the five named profiles (after the earlier system's TINY…HUGE sizes) and the
// default used for code regions written in-band by a model.

export type VmProfileName = "tiny" | "small" | "medium" | "large" | "huge";

export interface VmLimits {
  /** Total VM linear memory: stack + globals + heap. */
  memoryBytes: number;
  /** Shadow stack for arrays, structs and address-taken locals. */
  stackBytes: number;
  /** Metered work units (loop iterations weighted by body size, plus calls). */
  maxInstructions: number;
  maxOutputBytes: number;
  wallClockMs: number;
  maxCallDepth: number;
}

const MB = 1024 * 1024;

export const PROFILES: Record<VmProfileName, VmLimits> = {
  tiny: {
    memoryBytes: 2 * MB,
    stackBytes: 64 * 1024,
    maxInstructions: 1_000_000,
    maxOutputBytes: 4096,
    wallClockMs: 100,
    maxCallDepth: 200,
  },
  small: {
    memoryBytes: 32 * MB,
    stackBytes: 256 * 1024,
    maxInstructions: 20_000_000,
    maxOutputBytes: 16 * 1024,
    wallClockMs: 500,
    maxCallDepth: 1000,
  },
  medium: {
    memoryBytes: 256 * MB,
    stackBytes: 1 * MB,
    // About 1.3 s of metered work at the ~3e9 units/s measured by bench/c-vm (the seeds' VM
    // allowed 4e9 instructions per evaluation).
    maxInstructions: 4_000_000_000,
    maxOutputBytes: 64 * 1024,
    wallClockMs: 10_000,
    // gcc -O0 on an 8 MB stack recurses 261,921 deep into int f(int n){return n?1+f(n-1):0;}
    // (-O1 523,607; -O2 turns it into a loop). runC and exec reach this on a worker's big stack.
    maxCallDepth: 262_144,
  },
  large: {
    memoryBytes: 1024 * MB,
    stackBytes: 8 * MB,
    maxInstructions: 20_000_000_000,
    maxOutputBytes: 1 * MB,
    wallClockMs: 60_000,
    maxCallDepth: 1_048_576,
  },
  huge: {
    memoryBytes: 2047 * MB,
    stackBytes: 64 * MB,
    maxInstructions: 200_000_000_000,
    maxOutputBytes: 16 * MB,
    wallClockMs: 600_000,
    maxCallDepth: 4_194_304,
  },
};

/** Big enough for a 2,000,000-element sieve, small enough to answer between two tokens. */
export const DEFAULT_PROFILE: VmProfileName = "medium";

export function resolveLimits(profile?: VmProfileName, overrides?: Partial<VmLimits>): VmLimits {
  const name = profile ?? DEFAULT_PROFILE;
  const base = PROFILES[name];
  if (!base)
    throw new Error(
      `unknown VM profile '${String(profile)}' (use tiny, small, medium, large or huge)`,
    );
  const limits = { ...base, ...(overrides ?? {}) };
  for (const [k, v] of Object.entries(limits)) {
    if (typeof v !== "number" || !(v > 0))
      throw new Error(`VM limit '${k}' must be a positive number`);
  }
  if (limits.stackBytes + 64 * 1024 > limits.memoryBytes)
    throw new Error("VM limit 'stackBytes' must leave room for the heap inside 'memoryBytes'");
  if (limits.memoryBytes > 4 * 1024 * MB - 65536)
    throw new Error("VM limit 'memoryBytes' exceeds 4 GiB");
  return limits;
}
