// The exact text the decode loop injects after a region ran: ` = VM[248171]` after a bracket
// region, an output block after a fence.
//
// Formats (the model reads these back, so they must stay unambiguous):
// - Bracket region: ` = VM[<result>]`, errors as ` = VM[error: division by zero at 3:12]`.
//   Trailing newlines of the result are dropped (printf("%d\n") reads as VM[42]); inner newlines
//   stay. Reading rule for the framing: `\` takes the next character literally, `[` and `]`
//   nest, and the `]` that brings the depth below zero closes. A result that is balanced under
//   that rule (`[1, 2]`) goes in verbatim; any other has `\`, `[` and `]` backslash-escaped.
//   When the model already wrote part of ` = VM[` after the region (see scanner.ts, "don't
//   duplicate"), only the missing rest is injected: written " =" gives " VM[42]", written
//   " = VM[" gives "42]".
// - Fence region: an output fence on its own lines,
//       ```output
//       5050
//       ```
//   preceded by a newline unless the model already wrote one after the closing fence, and
//   followed by one. The output fence uses more backticks than the longest backtick run in the
//   result (at least 3), so a result containing ``` cannot close it early.
// - Results longer than `maxChars` are cut (at a line break when one is near, never inside a
//   surrogate pair) and end with the marker `… (N more characters)`.
import { injectionText, type VmOutcome } from "../vm/result.js";
import { matchResultPrefix, type ResultPrefixPhase } from "./scanner.js";

export interface InjectionOptions {
  /** Longest result kept, in UTF-16 units, before the truncation marker. Default 1000. */
  maxChars?: number;
  /** Text the model generated after the region's end that is still to be completed, as
   * `RegionScanner.resultWritten()` (brackets) or the text after the closing fence. */
  written?: string;
}

export const defaultMaxResultChars = 1000;

const COMPLETIONS: Record<ResultPrefixPhase, string> = {
  none: " = VM[",
  space: "= VM[",
  equals: " VM[",
  "equals-space": "VM[",
  V: "M[",
  VM: "[",
  open: "",
};

/** The injection for a region of the given syntax that produced `outcome`. */
export function formatInjection(
  region: { syntax: "bracket" | "fence" },
  outcome: VmOutcome,
  options: InjectionOptions = {},
): string {
  const maxChars = options.maxChars ?? defaultMaxResultChars;
  if (!Number.isInteger(maxChars) || maxChars < 1)
    throw new RangeError(`maxChars must be a positive integer, got ${maxChars}`);
  const written = options.written ?? "";
  const raw = injectionText(outcome);
  return region.syntax === "bracket"
    ? formatBracketResult(raw, maxChars, written)
    : formatFenceResult(raw, maxChars, written);
}

export function formatBracketResult(raw: string, maxChars: number, written = ""): string {
  const phase = matchResultPrefix(written) ?? "none";
  const body = escapeBracketBody(truncateResult(raw.replace(/[\r\n]+$/, ""), maxChars));
  return `${COMPLETIONS[phase]}${body}]`;
}

export function formatFenceResult(raw: string, maxChars: number, written = ""): string {
  let body = truncateResult(raw, maxChars);
  if (body.length > 0 && !body.endsWith("\n")) body += "\n";
  const fence = "`".repeat(Math.max(3, longestBacktickRun(body) + 1));
  const lead = /^[ \t]*\r?\n[ \t]*$/.test(written) ? "" : "\n";
  return `${lead}${fence}output\n${body}${fence}\n`;
}

/** Cuts `text` to at most `maxChars` units plus a marker saying how much was dropped. */
export function truncateResult(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  let cut = maxChars;
  const code = text.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut--;
  const lineBreak = text.lastIndexOf("\n", cut - 1);
  if (lineBreak >= cut * 0.8) cut = lineBreak + 1;
  const kept = text.slice(0, cut);
  const sep = kept.endsWith("\n") || kept.length === 0 ? "" : " ";
  return `${kept}${sep}… (${text.length - cut} more characters)`;
}

/** Leaves text alone when it is balanced under the reading rule (`\` takes the next character
 * literally, `[`/`]` nest), so the outer `]` still closes it; otherwise escapes `\`, `[` and `]`. */
export function escapeBracketBody(text: string): string {
  let depth = 0;
  for (let i = 0; i < text.length && depth >= 0; i++) {
    const ch = text[i];
    if (ch === "\\") {
      if (++i === text.length) depth = -1;
    } else if (ch === "[") depth++;
    else if (ch === "]") depth--;
  }
  if (depth === 0) return text;
  return text.replace(/[\\[\]]/g, (ch) => `\\${ch}`);
}

function longestBacktickRun(text: string): number {
  let longest = 0;
  let run = 0;
  for (const ch of text) {
    run = ch === "`" ? run + 1 : 0;
    if (run > longest) longest = run;
  }
  return longest;
}
