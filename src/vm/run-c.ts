// runC: one block of C in a fresh sandbox. It runs on the calling thread, where compiling and
// starting cost nothing extra; a run that exhausted the thread's native stack (node gives about
// 1 MB: some 20,000 frames) runs again on a VM worker with a big stack, where call depth is
// bounded by maxCallDepth as on an 8 MB native stack. A fresh session has no effects outside
// its outcome (output is buffered, files live in VM memory), so the second run is the whole run.
import { HOST_STACK_MESSAGE, runCOnThisThread, type VmOptions } from "./session.js";
import type { VmOutcome } from "./result.js";
import { onBigStack } from "./stack.js";
import { sharedRunner } from "./worker-runner.js";

/** Runs one block in a fresh session. */
export function runC(source: string, options: VmOptions = {}): VmOutcome {
  const outcome = runCOnThisThread(source, options);
  if (outcome.ok || !outcome.error.message.startsWith(HOST_STACK_MESSAGE)) return outcome;
  // Intrinsics are bound to this thread's model: such a run cannot move.
  if (onBigStack() || options.intrinsics) return outcome;
  const { intrinsics: _bound, ...plain } = options;
  return sharedRunner().runSync({ language: "c", source, options: plain });
}
