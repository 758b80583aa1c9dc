// Incremental detector of marked code regions ([C: …], [CALC: …], [LISP: …], ```c fences) in the
// text a model generates, fed one sampled token's text at a time, split anywhere.
//
// Contract for the decode loop:
// - Feed ONLY generated text (`feed`). The prompt is never fed, so a region written in the prompt
//   (few-shot examples) can never trigger; text the runtime adds itself goes through `inject`,
//   which is recorded (offsets stay aligned with the visible text) but never scanned.
// - Every decision is made one character at a time on a small state, so the events (and their
//   offsets) are identical however the text is cut into pieces. Text that might still become a
//   region opening (`[`, `[CA`, "``") is held as pending until the next characters decide it.
// - Fences open wherever ```c appears (not only at a line start) and close at a run of at least
//   as many backticks: at a line start always, elsewhere only outside C strings and comments.
// - Offsets are UTF-16 indices into `text` (generated + injected text, from the first fed piece).
// - A piece may carry text past an action point (after the closing `]`, after a model-written
//   `= VM[`). The events still cover the whole piece; a runtime that wants the injection to sit
//   right at the action point calls `rewind(event offset)` and drops the rest of that token.
// - Checkpoints: `snapshot()` is O(1)-ish and `restore()` returns exactly to it (text included);
//   `rewind(offset)` truncates to any earlier offset by replaying the kept text.
//
// Result placement and the "don't duplicate" rule (bracket regions only):
// After a bracket region closes, the scanner watches what the model writes next against the
// prefix ` = VM[` (spaces/tabs optional around `=`, no newline). The runtime then either
//   (a) injects at once: `formatInjection(region, outcome, { written: scanner.resultWritten() })`
//       completes whatever part of ` = VM[` the closing token already carried (e.g. the token
//       was `] =`, so " VM[42]" is injected, never a second " = "); or
//   (b) waits for the model: the scanner emits `result-prefix` once the model itself has written
//       `= VM[`, and the runtime injects only `42]`. If the model writes anything else first, the
//       scanner emits `result-declined` and the result is not shown.
// Either way the result text is written once. After an injection that follows a bracket region,
// the watch re-arms: if the model starts repeating ` = VM[` right after the injected result, the
// scanner emits `result-duplicate` so the runtime can rewind those tokens (and ban the path).

export type RegionLanguage = "c" | "calc" | "lisp";

/** `[TAG: body]`: closes at the `]` that balances the opening `[`. */
export interface BracketSyntax {
  kind: "bracket";
  /** Exact, case-sensitive tag between `[` and `:`, e.g. "C". */
  tag: string;
  language: RegionLanguage;
  enabled: boolean;
}

/** A Markdown fence whose info string is one of `tags` (exact), e.g. ```c … ```. */
export interface FenceSyntax {
  kind: "fence";
  tags: readonly string[];
  language: RegionLanguage;
  enabled: boolean;
}

export type RegionSyntax = BracketSyntax | FenceSyntax;

export function defaultSyntaxes(): RegionSyntax[] {
  return [
    { kind: "bracket", tag: "C", language: "c", enabled: true },
    { kind: "bracket", tag: "CALC", language: "calc", enabled: true },
    { kind: "bracket", tag: "LISP", language: "lisp", enabled: true },
    { kind: "fence", tags: ["c", "C"], language: "c", enabled: true },
  ];
}

export interface ScannerOptions {
  syntaxes?: readonly RegionSyntax[];
  /** A region whose body grows past this many characters is abandoned (treated as plain text),
   * so a model that opens `[C:` and never closes it cannot swallow the rest of the answer. */
  maxRegionChars?: number;
}

/** A closed region. `source` is exactly text[bodyStart, bodyEnd). */
export interface Region {
  language: RegionLanguage;
  syntax: "bracket" | "fence";
  /** The bracket tag or the fence info string as written. */
  tag: string;
  /** Offset of the opening `[` or first backtick. */
  start: number;
  bodyStart: number;
  bodyEnd: number;
  /** Offset just past the closing `]` or closing backticks. */
  end: number;
  source: string;
}

export type ScanEvent =
  | {
      type: "region-start";
      language: RegionLanguage;
      syntax: "bracket" | "fence";
      tag: string;
      start: number;
    }
  | { type: "region-end"; region: Region }
  /** The region never closed (end of generation or maxRegionChars); its text stays plain. */
  | {
      type: "region-abandoned";
      language: RegionLanguage;
      syntax: "bracket" | "fence";
      start: number;
      reason: "unterminated" | "too-long";
    }
  /** The model wrote the whole ` = VM[` after a bracket region; `offset` is just past the `[`. */
  | { type: "result-prefix"; region: Region; offset: number; written: string }
  /** The model wrote something other than ` = VM[` after a bracket region whose result was not
   * injected yet; `offset` is where it diverged. */
  | { type: "result-declined"; region: Region; offset: number }
  /** The model started ` = VM[` again right after an injected result (`start`..`offset`). */
  | { type: "result-duplicate"; region: Region; start: number; offset: number };

/** How far the model has got through ` = VM[`; "open" means complete. */
export type ResultPrefixPhase = "none" | "space" | "equals" | "equals-space" | "V" | "VM" | "open";

/** One character of the result-prefix grammar; null when `ch` leaves it. */
export function advanceResultPrefix(
  phase: ResultPrefixPhase,
  ch: string,
): ResultPrefixPhase | null {
  const blank = ch === " " || ch === "\t";
  switch (phase) {
    case "none":
    case "space":
      return blank ? "space" : ch === "=" ? "equals" : null;
    case "equals":
    case "equals-space":
      return blank ? "equals-space" : ch === "V" ? "V" : null;
    case "V":
      return ch === "M" ? "VM" : null;
    case "VM":
      return ch === "[" ? "open" : null;
    case "open":
      return null;
  }
}

/** The phase reached after `text`, or null if `text` is not a prefix of the grammar. */
export function matchResultPrefix(text: string): ResultPrefixPhase | null {
  let phase: ResultPrefixPhase | null = "none";
  for (const ch of text) {
    phase = advanceResultPrefix(phase, ch);
    if (phase === null) return null;
  }
  return phase;
}

// ---- internal state: plain data so that snapshots are cheap copies ----

type Lex =
  | "code"
  | "slash"
  | "line-comment"
  | "block-comment"
  | "block-star"
  | "string"
  | "string-escape"
  | "char"
  | "char-escape"
  | "hash"
  | "lisp-char";

interface Candidate {
  kind: "bracket" | "fence";
  start: number;
  /** Bracket: characters after `[`. Fence: the info-string characters after the backticks. */
  chars: string;
  ticks: number;
}

interface OpenRegion {
  syntaxIndex: number;
  language: RegionLanguage;
  syntax: "bracket" | "fence";
  tag: string;
  start: number;
  /** -1 while a fence is still in its info line. */
  bodyStart: number;
  fenceTicks: number;
  lex: Lex;
  depth: number;
  /** Backticks in the current run and where it started; whether it began a line. */
  tickRun: number;
  tickRunStart: number;
  tickRunAtLineStart: boolean;
  /** Offset of the current line's first character and whether only blanks precede. */
  lineStart: number;
  lineBlank: boolean;
}

interface Watch {
  region: Region;
  role: "result" | "duplicate";
  start: number;
  /** Just past the last character that advanced the prefix. */
  end: number;
  phase: ResultPrefixPhase;
}

interface State {
  candidate: Candidate | null;
  region: OpenRegion | null;
  watch: Watch | null;
}

interface Segment {
  start: number;
  injected: boolean;
}

export interface ScannerSnapshot {
  readonly text: string;
  readonly segments: readonly Segment[];
  readonly state: State;
}

const FENCE_INFO_CHAR = /[A-Za-z0-9_+#.-]/;

function copyState(s: State): State {
  return {
    candidate: s.candidate && { ...s.candidate },
    region: s.region && { ...s.region },
    watch: s.watch && { ...s.watch },
  };
}

function validateSyntaxes(syntaxes: readonly RegionSyntax[]): void {
  const seen = new Set<string>();
  syntaxes.forEach((syntax, i) => {
    const tags = syntax.kind === "bracket" ? [syntax.tag] : syntax.tags;
    if (tags.length === 0) throw new Error(`region syntax #${i}: a fence needs at least one tag`);
    for (const tag of tags) {
      const bad =
        syntax.kind === "bracket"
          ? tag.length === 0 || /[\s[\]:`]/.test(tag)
          : tag.length === 0 || [...tag].some((ch) => !FENCE_INFO_CHAR.test(ch));
      if (bad)
        throw new Error(`region syntax #${i}: invalid ${syntax.kind} tag ${JSON.stringify(tag)}`);
      const key = `${syntax.kind}:${tag}`;
      if (syntax.enabled && seen.has(key))
        throw new Error(
          `region syntax #${i}: ${syntax.kind} tag ${JSON.stringify(tag)} is enabled twice`,
        );
      if (syntax.enabled) seen.add(key);
    }
  });
}

export class RegionScanner {
  readonly syntaxes: readonly RegionSyntax[];
  readonly maxRegionChars: number;
  private textSoFar = "";
  private segments: Segment[] = [];
  private state: State = { candidate: null, region: null, watch: null };
  private events: ScanEvent[] = [];

  constructor(options: ScannerOptions = {}) {
    this.syntaxes = (options.syntaxes ?? defaultSyntaxes()).map((s) =>
      s.kind === "bracket" ? { ...s } : { ...s, tags: [...s.tags] },
    );
    validateSyntaxes(this.syntaxes);
    this.maxRegionChars = options.maxRegionChars ?? 65536;
    if (!(this.maxRegionChars > 0)) throw new Error("maxRegionChars must be positive");
  }

  /** Generated and injected text so far. */
  get text(): string {
    return this.textSoFar;
  }

  get offset(): number {
    return this.textSoFar.length;
  }

  /** Text held back because it may still open a region, or null. */
  pending(): { offset: number; text: string } | null {
    const c = this.state.candidate;
    return c ? { offset: c.start, text: this.textSoFar.slice(c.start) } : null;
  }

  /** The region being recorded, if any. */
  openRegion(): {
    language: RegionLanguage;
    syntax: "bracket" | "fence";
    tag: string;
    start: number;
  } | null {
    const r = this.state.region;
    return r && { language: r.language, syntax: r.syntax, tag: r.tag, start: r.start };
  }

  /** While a bracket region's result is still to be injected: the part of ` = VM[` the model
   * wrote after the region (pass it to formatInjection as `written`); "" otherwise. The injection
   * belongs at region.end + resultWritten().length; if `offset` is past that (the token carried
   * more, e.g. "VM[4"), rewind there first. */
  resultWritten(): string {
    const w = this.state.watch;
    return w && w.role === "result" ? this.textSoFar.slice(w.start, w.end) : "";
  }

  /** The bracket region whose result is awaiting injection, if any. */
  awaitingResult(): Region | null {
    const w = this.state.watch;
    return w && w.role === "result" ? w.region : null;
  }

  /** Scans one piece of generated text; returns the events it caused, in order. */
  feed(piece: string): ScanEvent[] {
    this.events = [];
    if (piece.length === 0) return this.events;
    this.addSegment(false);
    const base = this.textSoFar.length;
    this.textSoFar += piece;
    for (let i = 0; i < piece.length; i++) this.step(piece[i]!, base + i);
    return this.events;
  }

  /** Records text the runtime inserted (e.g. ` = VM[42]`). It is never scanned: a pending
   * opening before it becomes plain text, a region being recorded keeps its lexical state. */
  inject(text: string): void {
    if (text.length === 0) return;
    this.addSegment(true);
    this.textSoFar += text;
    const s = this.state;
    s.candidate = null;
    if (s.watch) {
      s.watch =
        s.watch.role === "result"
          ? {
              region: s.watch.region,
              role: "duplicate",
              start: this.textSoFar.length,
              end: this.textSoFar.length,
              phase: "none",
            }
          : null;
    }
    if (s.region) {
      // Injected text inside a region breaks the current line and backtick run.
      s.region.tickRun = 0;
      s.region.lineBlank = false;
    }
  }

  /** End of generation: reports a region that never closed. */
  finish(): ScanEvent[] {
    this.events = [];
    const r = this.state.region;
    if (r) this.abandon(r, "unterminated");
    this.state.candidate = null;
    this.state.watch = null;
    return this.events;
  }

  snapshot(): ScannerSnapshot {
    return { text: this.textSoFar, segments: this.segments.slice(), state: copyState(this.state) };
  }

  restore(snapshot: ScannerSnapshot): void {
    this.textSoFar = snapshot.text;
    this.segments = snapshot.segments.slice();
    this.state = copyState(snapshot.state);
  }

  /** Forgets everything: a new generation. */
  reset(): void {
    this.textSoFar = "";
    this.segments = [];
    this.state = { candidate: null, region: null, watch: null };
    this.events = [];
  }

  /** Truncates to `offset` (a rewind of the generated text) by replaying what is kept. */
  rewind(offset: number): void {
    if (!Number.isInteger(offset) || offset < 0 || offset > this.textSoFar.length)
      throw new RangeError(`rewind offset ${offset} is outside 0..${this.textSoFar.length}`);
    const text = this.textSoFar;
    const segments = this.segments;
    this.reset();
    for (let i = 0; i < segments.length; i++) {
      const from = segments[i]!.start;
      if (from >= offset) break;
      const to = Math.min(i + 1 < segments.length ? segments[i + 1]!.start : text.length, offset);
      const piece = text.slice(from, to);
      if (segments[i]!.injected) this.inject(piece);
      else this.feed(piece);
    }
    this.events = [];
  }

  // ---- the character machine ----

  private addSegment(injected: boolean): void {
    const last = this.segments[this.segments.length - 1];
    if (!last || last.injected !== injected)
      this.segments.push({ start: this.textSoFar.length, injected });
  }

  private step(ch: string, at: number): void {
    const s = this.state;
    if (s.region) {
      this.stepRegion(s.region, ch, at);
      return;
    }
    if (s.watch) {
      const next = advanceResultPrefix(s.watch.phase, ch);
      if (next !== null) {
        s.watch.phase = next;
        s.watch.end = at + 1;
        if (next === "open") {
          const w = s.watch;
          const offset = at + 1;
          if (w.role === "result") {
            this.events.push({
              type: "result-prefix",
              region: w.region,
              offset,
              written: this.textSoFar.slice(w.start, offset),
            });
            // Stays armed (role "result") until the runtime injects the completion.
          } else {
            this.events.push({
              type: "result-duplicate",
              region: w.region,
              start: w.start,
              offset,
            });
            s.watch = null;
          }
        }
        return;
      }
      if (s.watch.phase !== "open" && s.watch.role === "result")
        this.events.push({ type: "result-declined", region: s.watch.region, offset: at });
      if (s.watch.phase !== "open" || s.watch.role !== "result") s.watch = null;
    }
    this.stepNormal(ch, at);
  }

  private stepNormal(ch: string, at: number): void {
    const s = this.state;
    const c = s.candidate;
    if (c === null) {
      if (ch === "[" && this.anyBracketTag(""))
        s.candidate = { kind: "bracket", start: at, chars: "", ticks: 0 };
      else if (ch === "`" && this.anyFenceTag(""))
        s.candidate = { kind: "fence", start: at, chars: "", ticks: 1 };
      return;
    }
    if (c.kind === "bracket") {
      if (ch === ":") {
        const index = this.bracketSyntaxIndex(c.chars);
        if (index >= 0) {
          s.candidate = null;
          this.openBracket(index, c.start, at + 1);
          return;
        }
      } else if (this.anyBracketTag(c.chars + ch)) {
        c.chars += ch;
        return;
      }
      s.candidate = null;
      this.stepNormal(ch, at);
      return;
    }
    // Fence candidate: backticks, then an info string.
    if (c.chars === "" && ch === "`") {
      c.ticks++;
      return;
    }
    if (c.ticks >= 3 && FENCE_INFO_CHAR.test(ch) && this.anyFenceTag(c.chars + ch)) {
      c.chars += ch;
      return;
    }
    if (c.ticks >= 3 && !FENCE_INFO_CHAR.test(ch)) {
      const index = this.fenceSyntaxIndex(c.chars);
      if (index >= 0) {
        s.candidate = null;
        this.openFence(index, c, at);
        this.stepRegion(s.region!, ch, at);
        return;
      }
    }
    s.candidate = null;
    this.stepNormal(ch, at);
  }

  private openBracket(index: number, start: number, bodyStart: number): void {
    const syntax = this.syntaxes[index] as BracketSyntax;
    this.state.watch = null;
    this.state.region = {
      syntaxIndex: index,
      language: syntax.language,
      syntax: "bracket",
      tag: syntax.tag,
      start,
      bodyStart,
      fenceTicks: 0,
      lex: "code",
      depth: 0,
      tickRun: 0,
      tickRunStart: 0,
      tickRunAtLineStart: false,
      lineStart: bodyStart,
      lineBlank: true,
    };
    this.events.push({
      type: "region-start",
      language: syntax.language,
      syntax: "bracket",
      tag: syntax.tag,
      start,
    });
  }

  private openFence(index: number, c: Candidate, at: number): void {
    const syntax = this.syntaxes[index] as FenceSyntax;
    this.state.watch = null;
    this.state.region = {
      syntaxIndex: index,
      language: syntax.language,
      syntax: "fence",
      tag: c.chars,
      start: c.start,
      bodyStart: -1,
      fenceTicks: c.ticks,
      lex: "code",
      depth: 0,
      tickRun: 0,
      tickRunStart: 0,
      tickRunAtLineStart: false,
      lineStart: at,
      lineBlank: false,
    };
    this.events.push({
      type: "region-start",
      language: syntax.language,
      syntax: "fence",
      tag: c.chars,
      start: c.start,
    });
  }

  private stepRegion(r: OpenRegion, ch: string, at: number): void {
    if (r.syntax === "fence" && r.bodyStart < 0) {
      // The info line: blanks are skipped; a newline starts the body on the next line; anything
      // else starts an inline body (```c return 1;```).
      if (ch === " " || ch === "\t" || ch === "\r") return;
      if (ch === "\n") {
        r.bodyStart = at + 1;
        r.lineStart = at + 1;
        r.lineBlank = true;
        return;
      }
      r.bodyStart = at;
      r.lineStart = at;
    }
    if (at + 1 - r.bodyStart > this.maxRegionChars) {
      this.abandon(r, "too-long");
      return;
    }
    if (r.syntax === "fence" && this.stepFenceClose(r, ch, at)) return;
    const closes = r.language === "lisp" ? this.lexLisp(r, ch) : this.lexC(r, ch);
    if (ch === "\n") {
      r.lineStart = at + 1;
      r.lineBlank = true;
    } else if (ch !== " " && ch !== "\t") {
      r.lineBlank = false;
    }
    if (closes && r.syntax === "bracket") this.close(r, at, at + 1);
  }

  /** Counts backtick runs; returns true when the region was closed by this character. */
  private stepFenceClose(r: OpenRegion, ch: string, at: number): boolean {
    if (ch !== "`") {
      r.tickRun = 0;
      return false;
    }
    if (r.tickRun === 0) {
      r.tickRunStart = at;
      r.tickRunAtLineStart = r.lineBlank;
    }
    r.tickRun++;
    if (r.tickRun < r.fenceTicks) return false;
    // A run at the start of a line closes whatever the lexical state (strings never span lines,
    // so only an unterminated block comment is overridden); elsewhere only in plain code.
    const inCode = r.lex === "code" || r.lex === "slash";
    if (!r.tickRunAtLineStart && !inCode) return false;
    const bodyEnd = r.tickRunAtLineStart ? r.lineStart : r.tickRunStart;
    this.close(r, Math.max(bodyEnd, r.bodyStart), at + 1);
    return true;
  }

  /** C (and CALC) lexical state; returns true at a `]` that balances the region's `[`. */
  private lexC(r: OpenRegion, ch: string): boolean {
    switch (r.lex) {
      case "slash":
        if (ch === "/") {
          r.lex = "line-comment";
          return false;
        }
        if (ch === "*") {
          r.lex = "block-comment";
          return false;
        }
        r.lex = "code";
        return this.lexC(r, ch);
      case "line-comment":
        if (ch === "\n") r.lex = "code";
        return false;
      case "block-comment":
        if (ch === "*") r.lex = "block-star";
        return false;
      case "block-star":
        r.lex = ch === "/" ? "code" : ch === "*" ? "block-star" : "block-comment";
        return false;
      case "string":
      case "char": {
        const quote = r.lex === "string" ? '"' : "'";
        if (ch === "\\") r.lex = r.lex === "string" ? "string-escape" : "char-escape";
        // An unterminated literal ends at the line's end, as C says it must.
        else if (ch === quote || ch === "\n") r.lex = "code";
        return false;
      }
      case "string-escape":
        r.lex = "string";
        return false;
      case "char-escape":
        r.lex = "char";
        return false;
      default:
        return this.codeBracket(r, ch, { '"': "string", "'": "char", "/": "slash" });
    }
  }

  /** Lisp lexical state: strings, `;` comments, #\x characters. */
  private lexLisp(r: OpenRegion, ch: string): boolean {
    switch (r.lex) {
      case "line-comment":
        if (ch === "\n") r.lex = "code";
        return false;
      case "string":
        if (ch === "\\") r.lex = "string-escape";
        else if (ch === '"') r.lex = "code";
        return false;
      case "string-escape":
        r.lex = "string";
        return false;
      case "hash":
        if (ch === "\\") {
          r.lex = "lisp-char";
          return false;
        }
        r.lex = "code";
        return this.lexLisp(r, ch);
      case "lisp-char":
        r.lex = "code";
        return false;
      default:
        return this.codeBracket(r, ch, { '"': "string", ";": "line-comment", "#": "hash" });
    }
  }

  private codeBracket(r: OpenRegion, ch: string, enter: Record<string, Lex>): boolean {
    const next = enter[ch];
    if (next) {
      r.lex = next;
      return false;
    }
    if (ch === "[") r.depth++;
    else if (ch === "]") {
      if (r.depth === 0) return true;
      r.depth--;
    }
    return false;
  }

  private close(r: OpenRegion, bodyEnd: number, end: number): void {
    const region: Region = {
      language: r.language,
      syntax: r.syntax,
      tag: r.tag,
      start: r.start,
      bodyStart: r.bodyStart,
      bodyEnd,
      end,
      source: this.textSoFar.slice(r.bodyStart, bodyEnd),
    };
    this.state.region = null;
    this.events.push({ type: "region-end", region });
    if (r.syntax === "bracket")
      this.state.watch = { region, role: "result", start: end, end, phase: "none" };
  }

  private abandon(r: OpenRegion, reason: "unterminated" | "too-long"): void {
    this.state.region = null;
    this.events.push({
      type: "region-abandoned",
      language: r.language,
      syntax: r.syntax,
      start: r.start,
      reason,
    });
  }

  private bracketSyntaxIndex(tag: string): number {
    return this.syntaxes.findIndex((s) => s.enabled && s.kind === "bracket" && s.tag === tag);
  }

  private fenceSyntaxIndex(tag: string): number {
    return this.syntaxes.findIndex((s) => s.enabled && s.kind === "fence" && s.tags.includes(tag));
  }

  private anyBracketTag(prefix: string): boolean {
    return this.syntaxes.some((s) => s.enabled && s.kind === "bracket" && s.tag.startsWith(prefix));
  }

  private anyFenceTag(prefix: string): boolean {
    return this.syntaxes.some(
      (s) => s.enabled && s.kind === "fence" && s.tags.some((t) => t.startsWith(prefix)),
    );
  }
}
