// The streaming part of a TTY screen: the answer being written (which can be erased character by
// character, across wrapped and earlier lines) and a footer below it (hook console, status) that
// is redrawn in place without ever mixing into the answer.
//
// The cursor is kept at a known place: the end of the footer when one is drawn, otherwise the end
// of the answer. Every change hides the footer (up to the answer's last row, clear to the end of
// the screen), edits the answer and draws the footer again. Rows that scrolled off the top cannot
// be reached any more: an erase that would need them starts the display afresh below a marker.

export type Styler = (text: string) => string;

const plain: Styler = (t) => t;
const ANSI = /\x1b\[[0-9;]*[A-Za-z]/g;

/** Visible width, counting code points (the terminal's wide characters are rare in model text). */
export function visibleWidth(text: string): number {
  let n = 0;
  for (const _ of text.replace(ANSI, "")) n++;
  return n;
}

/** Cuts text with escape codes to `width` visible characters, keeping the escapes. */
export function cutToWidth(text: string, width: number): string {
  let out = "";
  let n = 0;
  for (let i = 0; i < text.length;) {
    const m = text.startsWith("\x1b[", i) ? /^\x1b\[[0-9;]*[A-Za-z]/.exec(text.slice(i)) : null;
    if (m) {
      out += m[0];
      i += m[0].length;
      continue;
    }
    const cp = text.codePointAt(i)!;
    const ch = String.fromCodePoint(cp);
    if (n >= width) {
      i += ch.length;
      continue;
    }
    out += ch;
    n++;
    i += ch.length;
  }
  return out;
}

/** What a character of model text looks like on screen (tabs as spaces, controls hidden). */
function displayOf(text: string): string {
  return text.replace(/\t/g, "    ").replace(/[\x00-\x08\x0b-\x1f\x7f]/g, "");
}

interface Segment {
  text: string;
  style: Styler;
}

export class LiveArea {
  private segments: Segment[] = [];
  /** Plain text of the answer, as the model's text (for offsets and erasing). */
  private text = "";
  private footer: string[] = [];
  private footerShown = 0;
  /** Offset in `text` of the first character on display (0 unless a rewind went off screen). */
  private origin = 0;
  /** Most rows below the display's first row ever drawn on: how far the screen has scrolled. */
  private extent = 0;

  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly columns: () => number,
    private readonly rows: () => number = () => Infinity,
    /** Printed where the display restarts after an erase reached rows that scrolled away. */
    private readonly restartMarker = "↶ rewound above the top of the screen; the answer goes on:",
  ) {}

  get length(): number {
    return this.text.length;
  }

  get content(): string {
    return this.text;
  }

  append(text: string, style: Styler = plain): void {
    if (text === "") return;
    this.hideFooter();
    this.segments.push({ text, style });
    this.text += text;
    this.out.write(this.paint(text, style));
    this.extent = Math.max(this.extent, this.endPosition().row);
    this.showFooter();
  }

  /** Removes the last `n` characters of the answer from the screen. */
  erase(n: number): void {
    n = Math.min(n, this.text.length);
    if (n <= 0) return;
    this.hideFooter();
    const before = this.endPosition();
    let left = n;
    while (left > 0) {
      const last = this.segments[this.segments.length - 1]!;
      const take = Math.min(left, last.text.length);
      last.text = last.text.slice(0, last.text.length - take);
      if (last.text === "") this.segments.pop();
      left -= take;
    }
    this.text = this.text.slice(0, this.text.length - n);
    const target = this.text.length < this.origin ? -1 : this.endPosition().row;
    // Rows above extent - (rows - 1) have scrolled off, wherever the display started.
    if (target < this.extent - (this.rows() - 1)) this.restart();
    else this.moveToEnd(before.row);
    this.showFooter();
  }

  /** Continues below a marker, re-printing the last line of what is kept. */
  private restart(): void {
    this.out.write("\r\n" + this.restartMarker + "\r\n");
    this.origin = this.text.lastIndexOf("\n") + 1;
    let at = 0;
    for (const seg of this.segments) {
      const from = Math.max(0, this.origin - at);
      if (from < seg.text.length) this.out.write(this.paint(seg.text.slice(from), seg.style));
      at += seg.text.length;
    }
    this.extent = this.endPosition().row;
  }

  /** Re-paints the last `n` characters in another style (a region recognised after the fact). */
  restyle(n: number, style: Styler): void {
    n = Math.min(n, this.text.length);
    if (n <= 0) return;
    const tail = this.text.slice(this.text.length - n);
    const footer = this.footer;
    this.footer = [];
    this.erase(n);
    this.footer = footer;
    this.append(tail, style);
  }

  setFooter(lines: string[]): void {
    this.hideFooter();
    this.footer = lines;
    this.showFooter();
  }

  /** Takes the footer away and leaves the cursor on a fresh line below the answer. */
  close(): void {
    this.hideFooter();
    this.footer = [];
    this.out.write(this.text === "" || this.text.endsWith("\n") ? "" : "\n");
  }

  private paint(text: string, style: Styler): string {
    // Style each line on its own so a newline never carries colour into the next row.
    return displayOf(text)
      .split("\n")
      .map((l) => (l === "" ? "" : style(l)))
      .join("\n");
  }

  /** Row (0 = the answer's first row) and column where the next character would go. */
  private endPosition(): { row: number; col: number; pending: boolean } {
    const cols = Math.max(1, this.columns());
    const lines = displayOf(this.text.slice(this.origin)).split("\n");
    let row = 0;
    for (let i = 0; i < lines.length - 1; i++) {
      const w = visibleWidth(lines[i]!);
      row += w === 0 ? 1 : Math.ceil(w / cols);
    }
    const w = visibleWidth(lines[lines.length - 1]!);
    // A line that exactly fills its last row leaves the cursor on that row, wrap pending.
    if (w > 0 && w % cols === 0) return { row: row + w / cols - 1, col: cols, pending: true };
    return { row: row + Math.floor(w / cols), col: w % cols, pending: false };
  }

  /** From physical row `fromRow` of the answer, goes to its end and clears everything below. */
  private moveToEnd(fromRow: number): void {
    const end = this.endPosition();
    const up = fromRow - end.row;
    let seq = up > 0 ? `\x1b[${up}A` : "";
    if (end.pending) {
      // Clearing at the last column would erase the last character: clear, then write it again.
      const last = this.segments[this.segments.length - 1]!;
      const chars = [...displayOf(last.text)];
      seq += `\x1b[${end.col}G\x1b[J` + last.style(chars[chars.length - 1] ?? "");
    } else {
      seq += `\x1b[${end.col + 1}G\x1b[J`;
    }
    this.out.write(seq);
  }

  private hideFooter(): void {
    if (this.footerShown === 0) return;
    const end = this.endPosition();
    // The footer starts on the row after the answer's end; its last row is footerShown below.
    this.moveToEnd(end.row + this.footerShown);
    this.footerShown = 0;
  }

  private showFooter(): void {
    if (this.footer.length === 0) return;
    const width = Math.max(1, this.columns() - 1);
    const lines = this.footer.map((l) => cutToWidth(l, width) + "\x1b[0m");
    this.out.write("\n" + lines.join("\n"));
    this.footerShown = lines.length;
    this.extent = Math.max(this.extent, this.endPosition().row + lines.length);
  }
}
