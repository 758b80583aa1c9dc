// The strict grader shared by every evaluation mode: an answer is right when the sentence after
// the last computed result states the expected result as its answer, not merely somewhere in it;
// and the regions of a transcript: whether one was written, and whether one compiled and ran.
import { RegionScanner } from "../decode/scanner.js";

/** What a graded answer is checked against. */
export interface GradedQuestion {
  task: string;
  question: string;
  /** The exact result: a whole number, or "1"/"0" (yes/no) for primality. */
  result: string;
}

/** The text the model wrote after the last result it was given (`= VM[…]` injected in-band, or
 * the tool message of the tool protocol, which is not part of the assistant's text): the answer
 * must be stated there, so a result copied by the runtime never counts as the model's answer. */
export function answerPart(text: string): string {
  const at = text.lastIndexOf("VM[");
  if (at < 0) return text;
  const close = text.indexOf("]", at);
  return close < 0 ? "" : text.slice(close + 1);
}

/** The final non-empty line of an answer (the sentence after the VM result). */
export function finalLine(text: string): string {
  const lines = answerPart(text)
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
  return lines[lines.length - 1] ?? "";
}

/** The whole numbers of a text in order; a minus sign counts only where it cannot be an operator
 * between two numbers ("1 - 6 = -5" holds 1, 6 and -5; "4821-377" holds 4821 and 377). */
export function numbersIn(text: string): string[] {
  return text.match(/(?<![\d\w])-?\d+/g) ?? [];
}

const magnitude = (n: string) => n.replace(/^-/, "");

/** Whether `others` can all be restated question numbers, each used at most as often as the
 * question has it: "The gcd of 12 and 4 is 12." restates 12 twice, so 12 cannot be one of them. */
function allRestated(others: readonly string[], given: readonly string[]): boolean {
  const left = new Map<string, number>();
  for (const g of given) left.set(g, (left.get(g) ?? 0) + 1);
  for (const n of others) {
    const m = magnitude(n);
    const count = left.get(m) ?? 0;
    if (count === 0) return false;
    left.set(m, count - 1);
  }
  return true;
}

/** The final line states the result as a whole number somewhere (the lenient column "result in
 * answer": it shows how often a line has the right number but the wrong sentence). */
export function carriesResult(q: GradedQuestion, text: string): boolean {
  const line = finalLine(text);
  if (q.task === "prime") return primeVerdict(line) === q.result;
  return numbersIn(line).includes(q.result);
}

/** "1" for a line that says yes/is prime, "0" for no/not prime/composite, undefined otherwise. */
function primeVerdict(line: string): string | undefined {
  if (/^No\b/i.test(line) || /\bnot\s+(a\s+)?prime\b|\bcomposite\b/i.test(line)) return "0";
  if (/^Yes\b/i.test(line) || /\bis\s+(a\s+)?prime\b/i.test(line)) return "1";
  return undefined;
}

/**
 * Grades an answer. Its final line must carry the result as the answer: the line holds the result
 * once more than the question's own numbers can explain, and every other number in it is one of
 * the question's. So "There are 669 primes below 4000." for "below 5000" is wrong although 669 is
 * right, and "The gcd of 12 and 4 is 12." for gcd(12, 4) = 4 is wrong although it contains 4.
 * A primality answer gives the right verdict and names the number it is about.
 */
export function isCorrect(q: GradedQuestion, text: string): boolean {
  const line = finalLine(text);
  const given = numbersIn(q.question).map(magnitude);
  const found = numbersIn(line);
  if (q.task === "prime") {
    const n = given[given.length - 1];
    return (
      primeVerdict(line) === q.result &&
      n !== undefined &&
      found.some((x) => x === n) &&
      // The VM's 1/0 may be quoted ("The VM returned 1, so 7919 is prime.").
      allRestated(
        found.filter((x) => x !== q.result),
        given,
      )
    );
  }
  return found.some(
    (n, i) => n === q.result && allRestated([...found.slice(0, i), ...found.slice(i + 1)], given),
  );
}

/** A closed region of a transcript and the result injected after it (undefined: none followed). */
export interface TranscriptRegion {
  source: string;
  result: string | undefined;
}

/** The regions a transcript holds, found by the runtime's own scanner, each with the ` = VM[…]`
 * text that follows it. With injection on, that text is always the runtime's: it is injected
 * the moment the region closes. */
export function regionsOf(text: string): TranscriptRegion[] {
  const scanner = new RegionScanner();
  const regions: TranscriptRegion[] = [];
  for (const ev of scanner.feed(text)) {
    if (ev.type !== "region-end") continue;
    const after = /^\s*=\s*VM\[([^\]]*)\]/.exec(text.slice(ev.region.end));
    regions.push({ source: ev.region.source, result: after?.[1] });
  }
  return regions;
}

export interface TranscriptGrade {
  /** A region was written and closed. */
  wroteRegion: boolean;
  /** A region compiled and ran: its injected result is not an error. */
  ran: boolean;
  /** The final answer is right (isCorrect). */
  correct: boolean;
}

/** The three outcomes the few-shot harness counts, from the transcript alone. */
export function gradeTranscript(q: GradedQuestion, text: string): TranscriptGrade {
  const regions = regionsOf(text);
  return {
    wroteRegion: regions.length > 0,
    ran: regions.some((r) => r.result !== undefined && !r.result.startsWith("error:")),
    correct: isCorrect(q, text),
  };
}
