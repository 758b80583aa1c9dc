// Which regions may run on a VM worker instead of the decode loop's thread, decided from the
// source alone: a region that cannot read or steer the model, and whose run leaves nothing that
// later code of the sequence would miss, gives the same outcome in a fresh sandbox. The loop
// (loop.ts) then keeps stepping the other sequences while it runs.
import type { VmJob } from "../vm/job.js";
import type { Region } from "./scanner.js";
import type { SequenceState } from "./sequence.js";

/**
 * The worker job for a region, or null when it must run on the sequence's own thread:
 * - CALC is stateless and never reads the model: always.
 * - C, outside a ruffian.session: when the block names no intrinsic (the one table in
 *   intrinsic-table.ts), nor memory[] or rand's seed, nor anything the hook or an earlier
 *   region defined here, and declares no global variable (VmSession.adoptDefinitions). Its
 *   definitions are adopted here at once, and later worker runs see them.
 * - Lisp keeps its definitions in a session on this thread: never.
 */
export function offloadJob(s: SequenceState, region: Region): VmJob | null {
  switch (region.language) {
    case "calc":
      return { language: "calc", source: region.source };
    case "c": {
      // A session shared across requests stays on this thread (its requests may use hooks).
      if (s.options.live) return null;
      const prelude = s.vm.adoptDefinitions(region.source);
      if (!prelude) return null;
      return {
        language: "c",
        source: region.source,
        options: { profile: s.options.profile },
        prelude,
      };
    }
    case "lisp":
      return null;
  }
}
