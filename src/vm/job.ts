// One self-contained VM job — a language, a program and plain-data options — and running it in
// a fresh sandbox. Jobs are plain data so that they can cross to a worker thread
// (worker-runner.ts); a model-bound session (intrinsics) never leaves its own thread.
import { runCalc, type CalcOptions } from "../calc/calc.js";
import { runLisp, type LispOptions } from "../lisp/session.js";
import { resolveLispLimits } from "../lisp/limits.js";
import { resolveLimits } from "./limits.js";
import type { VmOutcome } from "./result.js";
import { runCOnThisThread, type VmOptions } from "./session.js";

export type VmLanguage = "c" | "lisp" | "calc";

/** runC's options that are plain data: intrinsics read a live model and stay on its thread. */
export type PlainVmOptions = Omit<VmOptions, "intrinsics">;

export type VmJob =
  | {
      language: "c";
      source: string;
      options?: PlainVmOptions;
      /** Earlier blocks whose definitions the program sees; adopted, not run (see
       * VmSession.adoptDefinitions). */
      prelude?: readonly string[];
    }
  | { language: "lisp"; source: string; options?: LispOptions }
  | { language: "calc"; source: string; options?: CalcOptions };

/** Runs a job on the calling thread (a worker's: no retry elsewhere); never throws. */
export function runJob(job: VmJob): VmOutcome {
  switch (job.language) {
    case "c":
      return runCOnThisThread(job.source, job.options, job.prelude);
    case "lisp":
      return runLisp(job.source, job.options);
    case "calc":
      return runCalc(job.source, job.options);
  }
}

/** CALC has no clock of its own: an expression of 65,536-bit integers finishes in milliseconds. */
const CALC_WALL_CLOCK_MS = 1000;

/** The wall-clock limit the job runs under (a worker silent for much longer is hung); a job
 * whose options are invalid fails at once, so any number will do for it. */
export function jobWallClockMs(job: VmJob): number {
  try {
    switch (job.language) {
      case "c":
        return resolveLimits(job.options?.profile, job.options?.limits).wallClockMs;
      case "lisp":
        return resolveLispLimits(job.options?.limits).wallClockMs;
      case "calc":
        return CALC_WALL_CLOCK_MS;
    }
  } catch {
    return CALC_WALL_CLOCK_MS;
  }
}
