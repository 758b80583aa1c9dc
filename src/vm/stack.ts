// Which native stack the current thread runs VM code on. node's main thread gives V8 about
// 1 MB (some 20,000 frames of a small C function); VM workers get a big one (worker-runner.ts).
// runC retries a run that exhausted a small stack on a worker; on a big stack the error stands.

let bigStack = false;

/** Called once by a VM worker at start-up. */
export function markBigStack(): void {
  bigStack = true;
}

export function onBigStack(): boolean {
  return bigStack;
}

/** Native stack of each VM worker. Only the pages a recursion touches are ever committed; at
 * about 50 bytes per frame of a small optimized function this holds millions of frames, so
 * maxCallDepth, not the host, is what ends a deep recursion. */
export const WORKER_STACK_MB = 512;
