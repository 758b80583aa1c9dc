// Which regions run on a VM worker instead of the decode loop's thread, decided from the source
// alone. A region that may compute for long (a loop, a function) and cannot read or steer the
// model, and whose run leaves nothing that later code of the sequence would miss, gives the
// same outcome in a fresh sandbox; the loop (loop.ts) keeps stepping the other sequences while
// it runs. Everything else runs in place: straight-line code finishes in microseconds, and a
// worker round trip would only pause its sequence.
import { preprocess } from "../c/preprocess.js";
import { tokenize } from "../c/tokenize.js";
import type { VmJob } from "../vm/job.js";
import type { Region } from "./scanner.js";
import type { SequenceState } from "./sequence.js";

/**
 * The worker job for a region, or null when it runs on the sequence's own thread. Only C moves
 * (CALC has no loops; Lisp keeps its definitions in a session on this thread), and only outside
 * a ruffian.session, when the block can run for long, names no intrinsic (the one table in
 * intrinsic-table.ts), nor memory[] or rand's seed, nor anything the hook or an earlier region
 * defined here, and declares no global variable (VmSession.adoptDefinitions). Its definitions
 * are adopted here at once, and later worker runs see them.
 */
export function offloadJob(s: SequenceState, region: Region): VmJob | null {
  if (region.language !== "c" || s.options.live || isStraightLine(s, region.source)) return null;
  const prelude = s.vm.adoptDefinitions(region.source);
  if (!prelude) return null;
  return { language: "c", source: region.source, options: { profile: s.options.profile }, prelude };
}

const LOOP_KEYWORDS: ReadonlySet<string> = new Set(["for", "while", "do", "goto"]);

/** A block with no loop, no body (`{`) and no call of a function the session defined runs each
 * statement at most once: it cannot compute for long. Unreadable code is not straight-line. */
function isStraightLine(s: SequenceState, source: string): boolean {
  let tokens;
  try {
    tokens = preprocess(tokenize(source));
  } catch {
    return false;
  }
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.kind === "keyword" && LOOP_KEYWORDS.has(t.text)) return false;
    if (t.kind === "punct" && t.text === "{") return false;
    if (t.kind === "ident" && tokens[i + 1]?.text === "(" && s.definesFunction(t.text))
      return false;
  }
  return true;
}
