// The VM's public surface: run a block of C (runC), keep a REPL-like session (VmSession), bind
// host intrinsics (IntrinsicRegistry), pick sandbox limits (PROFILES), and the result shapes.
export * from "./result.js";
export { PROFILES, DEFAULT_PROFILE, resolveLimits } from "./limits.js";
export type { VmLimits, VmProfileName } from "./limits.js";
export { VmSession, runC, MEMORY_INTS, valueText } from "./session.js";
export type { VmOptions } from "./session.js";
export { IntrinsicRegistry, KNOWN_INTRINSICS, parseSignature } from "./intrinsics.js";
export type { IntrinsicContext, IntrinsicImpl } from "./intrinsics.js";
