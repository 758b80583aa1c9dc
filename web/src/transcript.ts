// One answer as the page holds it: the pieces of text in order (sampled tokens with their
// probabilities, injected results without), the rewinds' footnotes, and how each character is
// styled. Styling runs the runtime's own region scanner over the pieces, feeding sampled text and
// recording injected text exactly as the decode loop does, so the page marks the same regions.
import { RegionScanner } from "../../src/decode/scanner.js";
import type { TokenInfo } from "./protocol.js";

export interface Piece {
  text: string;
  /** null for injected text. */
  token: TokenInfo | null;
  /** Index of the sampled token in the plots (every sampled token, rewound ones included). */
  step: number;
}

export interface Footnote {
  memo: string;
  erased: string;
}

export type Style = "plain" | "region" | "result" | "vm-error";

export interface Span {
  text: string;
  style: Style;
  /** Index of the piece this span belongs to. */
  piece: number;
}

export function answerText(pieces: readonly Piece[]): string {
  return pieces.map((p) => p.text).join("");
}

/** Removes `erased` from the end of the answer (a rewind). Returns the kept pieces and how much
 * of `erased` was found at the end (all of it unless the stream and the event disagree). */
export function erase(pieces: readonly Piece[], erased: string): Piece[] {
  let remaining = Math.min(erased.length, answerText(pieces).length);
  const kept = pieces.slice();
  while (remaining > 0 && kept.length > 0) {
    const last = kept[kept.length - 1]!;
    if (last.text.length <= remaining) {
      kept.pop();
      remaining -= last.text.length;
    } else {
      kept[kept.length - 1] = { ...last, text: last.text.slice(0, last.text.length - remaining) };
      remaining = 0;
    }
  }
  return kept;
}

/** Style of every character: regions (closed or still open), injected results, VM errors. */
function styleRanges(pieces: readonly Piece[]): Style[] {
  const scanner = new RegionScanner();
  const text = answerText(pieces);
  const styles: Style[] = new Array<Style>(text.length).fill("plain");
  const paint = (from: number, to: number, style: Style) => {
    for (let i = from; i < to && i < styles.length; i++) styles[i] = style;
  };
  let offset = 0;
  for (const piece of pieces) {
    if (piece.token === null) {
      scanner.inject(piece.text);
      paint(
        offset,
        offset + piece.text.length,
        /VM\[error/.test(piece.text) ? "vm-error" : "result",
      );
    } else {
      for (const event of scanner.feed(piece.text)) {
        if (event.type === "region-end") paint(event.region.start, event.region.end, "region");
        // The model wrote ` = VM[` itself; the runtime injects only the rest.
        if (event.type === "result-prefix") paint(event.region.end, event.offset, "result");
      }
    }
    offset += piece.text.length;
  }
  const open = scanner.openRegion();
  if (open) paint(open.start, text.length, "region");
  return styles;
}

/** The answer cut into spans of one style within one piece, for rendering. */
export function spansOf(pieces: readonly Piece[]): Span[] {
  const styles = styleRanges(pieces);
  const spans: Span[] = [];
  let offset = 0;
  pieces.forEach((piece, index) => {
    let from = 0;
    for (let i = 1; i <= piece.text.length; i++) {
      if (i === piece.text.length || styles[offset + i] !== styles[offset + from]) {
        spans.push({
          text: piece.text.slice(from, i),
          style: styles[offset + from] ?? "plain",
          piece: index,
        });
        from = i;
      }
    }
    offset += piece.text.length;
  });
  return spans;
}
