// The VM's public surface: run a block of C (runC), keep a REPL-like session (VmSession), bind
// host intrinsics (IntrinsicRegistry), pick sandbox limits (PROFILES), and the result shapes.
export * from "./result.js";
export { PROFILES, DEFAULT_PROFILE, resolveLimits } from "./limits.js";
export type { VmLimits, VmProfileName } from "./limits.js";
export { VmSession, MEMORY_INTS, valueText } from "./session.js";
export { runC } from "./run-c.js";
export { VmWorkerRunner, sharedRunner } from "./worker-runner.js";
export type { WorkerRunnerOptions, JobOptions } from "./worker-runner.js";
export type { VmJob, VmLanguage, PlainVmOptions } from "./job.js";
export type { VmOptions } from "./session.js";
export { IntrinsicRegistry, KNOWN_INTRINSICS, parseSignature } from "./intrinsics.js";
export type { IntrinsicContext, IntrinsicImpl } from "./intrinsics.js";
