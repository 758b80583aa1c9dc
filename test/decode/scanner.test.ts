// Region scanner: every syntax, every way of cutting the text into tokens, lexical robustness,
// pending text, injection, rewind/restore and the don't-duplicate watch.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  RegionScanner,
  defaultSyntaxes,
  matchResultPrefix,
  type Region,
  type RegionSyntax,
  type ScanEvent,
  type ScannerOptions,
} from "../../src/decode/scanner.js";

function scan(
  pieces: string[],
  options?: ScannerOptions,
): { events: ScanEvent[]; s: RegionScanner } {
  const s = new RegionScanner(options);
  const events: ScanEvent[] = [];
  for (const p of pieces) events.push(...s.feed(p));
  return { events, s };
}

function regions(events: ScanEvent[]): Region[] {
  return events.flatMap((e) => (e.type === "region-end" ? [e.region] : []));
}

function only(text: string, options?: ScannerOptions): Region {
  const found = regions(scan([text], options).events);
  assert.equal(found.length, 1, `expected one region in ${JSON.stringify(text)}`);
  return found[0]!;
}

/** Observable end state: what is pending, what is open, what result is awaited. */
function endState(s: RegionScanner) {
  return {
    text: s.text,
    pending: s.pending(),
    open: s.openRegion(),
    written: s.resultWritten(),
    awaiting: s.awaitingResult(),
  };
}

test("[C: …] with and without a space, offsets and source", () => {
  const text = "847 x 293 = [C: 847*293] and more";
  const { events } = scan([text]);
  assert.deepEqual(events[0], {
    type: "region-start",
    language: "c",
    syntax: "bracket",
    tag: "C",
    start: 12,
  });
  const r = regions(events)[0]!;
  assert.equal(r.source, " 847*293");
  assert.equal(text.slice(r.start, r.end), "[C: 847*293]");
  assert.equal(text.slice(r.bodyStart, r.bodyEnd), r.source);
  assert.equal(only("x=[C:1+2]").source, "1+2");
});

test("[CALC: …] and [LISP: …] carry their language", () => {
  const calc = only("7 × 6 = [CALC:7*6] ok");
  assert.deepEqual([calc.language, calc.tag, calc.source], ["calc", "CALC", "7*6"]);
  const lisp = only("[LISP: (define (fib n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))]");
  assert.equal(lisp.language, "lisp");
  assert.equal(lisp.source, " (define (fib n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))");
});

test("nested brackets close at the balancing ]", () => {
  const r = only("[C: int a[3]={1,2,3}; int i = a[a[0]]; return a[i];] tail");
  assert.equal(r.source, " int a[3]={1,2,3}; int i = a[a[0]]; return a[i];");
});

test("] inside string and char literals, escapes and comments does not close", () => {
  const body = ` char *s = "]"; char c = ']'; char *t = "\\"]"; char d = '\\''; /* ] */ // ]\n return s[0] == c;`;
  assert.equal(only(`[C:${body}] after`).source, body);
  assert.equal(only(`[CALC: 1 /* ] */ + 2]`).source, " 1 /* ] */ + 2");
  // An unterminated string ends with its line, so the region still closes on the next line.
  assert.equal(only(`[C: puts("oops);\nreturn 1;]`).source, ` puts("oops);\nreturn 1;`);
  // A division is not a comment.
  assert.equal(only(`[C: 6/3]`).source, " 6/3");
});

test("Lisp strings, ; comments and #\\] characters do not close", () => {
  assert.equal(only(`[LISP: (display "]")]`).source, ` (display "]")`);
  assert.equal(only(`[LISP: (list #\\] 1)]`).source, ` (list #\\] 1)`);
  assert.equal(only(`[LISP: (+ 1 2) ; ]\n]`).source, ` (+ 1 2) ; ]\n`);
  assert.equal(only(`[LISP: (vector-ref [1 2] 0)]`).source, ` (vector-ref [1 2] 0)`);
  // Unbalanced parentheses still close at ]: the Lisp reader reports the error.
  assert.equal(only(`[LISP: (+ 1 2]`).source, ` (+ 1 2`);
});

test("fences: with newline, inline, tag C, longer fences, closing rules", () => {
  const text = 'Sum:\n```c\nint main() {\n  printf("%d", 5050);\n}\n```\nDone.';
  const r = only(text);
  assert.deepEqual([r.language, r.syntax, r.tag], ["c", "fence", "c"]);
  assert.equal(r.source, 'int main() {\n  printf("%d", 5050);\n}\n');
  assert.equal(text.slice(r.start, r.end), text.slice(5, text.indexOf("```\nDone") + 3));

  assert.equal(only("```c return 1+2;```").source, "return 1+2;");
  assert.equal(only("```C\r\nreturn 7;\n```").source, "return 7;\n");
  assert.equal(only("```c   \nx;\n   ```").source, "x;\n");
  assert.equal(only('```c\nputs("```");\n```').source, 'puts("```");\n');
  assert.equal(
    only("```c\nchar q = '`'; /* ``` */\nreturn 0;\n```").source,
    "char q = '`'; /* ``` */\nreturn 0;\n",
  );
  // A line that starts with ``` closes even inside an unterminated block comment.
  assert.equal(only("```c\nreturn 0; /* oops\n```\n").source, "return 0; /* oops\n");
  // A four-backtick fence is not closed by three.
  assert.equal(only("````c\nx = 1; ```\n````").source, "x = 1; ```\n");
  // Brackets in a fence are just C.
  assert.equal(only("```c\nint a[2]; a[0] = ']';\n```").source, "int a[2]; a[0] = ']';\n");
});

test("fences with other tags or no tag are not regions", () => {
  for (const text of [
    "```python\nprint(1)\n```",
    "```cpp\nint x;\n```",
    "```\nplain\n```",
    "``c``",
    "```c++\nx\n```",
    "```csharp\nx\n```",
  ]) {
    const { events, s } = scan([text]);
    assert.deepEqual(events, [], text);
    assert.equal(s.openRegion(), null, text);
  }
});

test("no new region starts inside a region", () => {
  const r = only("[C: /* [C: 1] */ return 2;]");
  assert.equal(r.source, " /* [C: 1] */ return 2;");
  const f = only("```c\n[C: x]\n```");
  assert.equal(f.source, "[C: x]\n");
});

test("regions one after another, and text with brackets that are not regions", () => {
  const { events } = scan(["a[0] [x] [C: 1] [Cx] [c: 2] [CALC: 2] [ LISP: 3] [LISP:(+ 1 2)]"]);
  assert.deepEqual(
    regions(events).map((r) => [r.tag, r.source]),
    [
      ["C", " 1"],
      ["CALC", " 2"],
      ["LISP", "(+ 1 2)"],
    ],
  );
});

test("only fed text can trigger: a region begun in the prompt is not continued", () => {
  // The prompt "Few-shot: [C: 1+" is never fed; generation continues with "2] = 3.".
  const s = new RegionScanner();
  assert.deepEqual(s.feed("2] = 3. [C"), []);
  assert.equal(s.text, "2] = 3. [C");
  assert.equal(regions(s.feed(": 4]")).length, 1);
});

// ---- every split ----

const SPLIT_SAMPLES = [
  "a [C: x[1]] = VM[",
  "[CALC: 7*6].",
  '[C: s="]";] ok',
  "[LISP: (f #\\])]",
  "[CA[C:1]",
  "x ```c\nr=1;\n```\n",
  "```c return 1;```",
  "[C: 1] =VM[ [C",
  "`` ```cpp [C: /*]*/2]",
];

function splitsOf(text: string): string[][] {
  const out: string[][] = [];
  for (let i = 1; i < text.length; i++) {
    out.push([text.slice(0, i), text.slice(i)]);
    for (let j = i + 1; j < text.length; j++)
      out.push([text.slice(0, i), text.slice(i, j), text.slice(j)]);
  }
  out.push([...text]);
  return out;
}

test("every cut into 2 and 3 pieces and 1-character pieces gives the same events", () => {
  let cases = 0;
  let expected = 0;
  for (const text of SPLIT_SAMPLES) {
    const cuts = text.length - 1;
    expected += cuts + (cuts * (cuts - 1)) / 2 + 1;
    const whole = scan([text]);
    assert.ok(whole.events.length > 0 || text.includes("cpp"), text);
    for (const pieces of splitsOf(text)) {
      const split = scan(pieces);
      assert.deepEqual(split.events, whole.events, JSON.stringify(pieces));
      assert.deepEqual(endState(split.s), endState(whole.s), JSON.stringify(pieces));
      cases++;
    }
  }
  assert.equal(cases, expected);
});

// ---- configuration ----

test("disabled syntaxes never trigger; the others still do", () => {
  const syntaxes = defaultSyntaxes().map((s) =>
    s.kind === "bracket" && s.tag === "CALC" ? { ...s, enabled: false } : s,
  );
  const { events } = scan(["[CALC: 1+1] [C: 2]"], { syntaxes });
  assert.deepEqual(
    regions(events).map((r) => r.tag),
    ["C"],
  );
  const noFence = defaultSyntaxes().filter((s) => s.kind !== "fence");
  assert.deepEqual(scan(["```c\nx;\n```"], { syntaxes: noFence }).events, []);
  // With CALC disabled, "[CA" is no longer pending: nothing can start with it.
  const s = new RegionScanner({ syntaxes });
  s.feed("[CA");
  assert.equal(s.pending(), null);
});

test("bracket tag names and fence tags are configurable", () => {
  const syntaxes: RegionSyntax[] = [
    { kind: "bracket", tag: "RUN", language: "c", enabled: true },
    { kind: "bracket", tag: "λ", language: "lisp", enabled: true },
    { kind: "fence", tags: ["lisp", "scheme"], language: "lisp", enabled: true },
  ];
  const { events } = scan(["[C: 1] [RUN: 2] [λ: (+ 1 2)]\n```scheme\n(car '(1))\n```"], {
    syntaxes,
  });
  assert.deepEqual(
    regions(events).map((r) => [r.language, r.tag, r.source]),
    [
      ["c", "RUN", " 2"],
      ["lisp", "λ", " (+ 1 2)"],
      ["lisp", "scheme", "(car '(1))\n"],
    ],
  );
});

test("bad syntax configuration is rejected with a clear message", () => {
  const bad = (syntaxes: RegionSyntax[]) => () => new RegionScanner({ syntaxes });
  assert.throws(
    bad([{ kind: "bracket", tag: "A:B", language: "c", enabled: true }]),
    /invalid bracket tag "A:B"/,
  );
  assert.throws(
    bad([{ kind: "bracket", tag: "", language: "c", enabled: true }]),
    /invalid bracket tag/,
  );
  assert.throws(
    bad([{ kind: "fence", tags: [], language: "c", enabled: true }]),
    /at least one tag/,
  );
  assert.throws(
    bad([{ kind: "fence", tags: ["c c"], language: "c", enabled: true }]),
    /invalid fence tag/,
  );
  assert.throws(
    bad([
      { kind: "bracket", tag: "C", language: "c", enabled: true },
      { kind: "bracket", tag: "C", language: "calc", enabled: true },
    ]),
    /enabled twice/,
  );
  assert.throws(() => new RegionScanner({ maxRegionChars: 0 }), /maxRegionChars/);
});

// ---- pending text ----

test("text that may still open a region is pending, and is never lost", () => {
  const s = new RegionScanner();
  assert.deepEqual(s.feed("See [CA"), []);
  assert.deepEqual(s.pending(), { offset: 4, text: "[CA" });
  assert.deepEqual(s.feed("T] and [C"), []);
  assert.deepEqual(s.pending(), { offset: 14, text: "[C" });
  assert.deepEqual(s.feed("x] then ``"), []);
  assert.deepEqual(s.pending(), { offset: 24, text: "``" });
  assert.deepEqual(s.feed("`c"), []);
  assert.deepEqual(s.pending(), { offset: 24, text: "```c" });
  assert.deepEqual(s.feed("pp\n"), []);
  assert.equal(s.pending(), null);
  assert.equal(s.text, "See [CAT] and [Cx] then ```cpp\n");
  // "[C" then "ALC:" decides for CALC, "[C" then ":" for C.
  const t = new RegionScanner();
  t.feed("[C");
  const calc = t.feed("ALC:");
  assert.equal(calc[0]?.type === "region-start" && calc[0].tag, "CALC");
  const u = new RegionScanner();
  u.feed("[C");
  const c = u.feed(":");
  assert.equal(c[0]?.type === "region-start" && c[0].tag, "C");
});

// ---- injection ----

test("injected text is never scanned and breaks a pending opening", () => {
  const s = new RegionScanner();
  s.feed("[C: 1+2]");
  s.inject(" = VM[3] [C: 4] ```c\nx\n```\n");
  assert.equal(s.openRegion(), null);
  assert.deepEqual(s.feed(" fine"), []);
  s.feed(" [C");
  s.inject("ALC: injected");
  assert.deepEqual(s.feed(": 2]"), []);
  assert.equal(s.text, "[C: 1+2] = VM[3] [C: 4] ```c\nx\n```\n fine [CALC: injected: 2]");
  // A later region still works and offsets count the injected text.
  const ev = s.feed(" [C: 5]");
  assert.equal(regions(ev)[0]?.start, s.text.length - 6);
});

test("text injected inside a region is part of its source but not lexed", () => {
  const s = new RegionScanner();
  s.feed("[C: a");
  s.inject('"]');
  const r = regions(s.feed(" + 1]"))[0]!;
  assert.equal(r.source, ' a"] + 1');
});

// ---- rewind and restore ----

test("snapshot/restore returns exactly to the checkpoint", () => {
  const s = new RegionScanner();
  s.feed("Let me see: [C: int a[2] = {1, 2};");
  const cp = s.snapshot();
  const before = endState(s);
  const first = s.feed(' return a[1]; /* "]" */]');
  s.inject(" = VM[2]");
  s.feed(" ok [CA");
  s.restore(cp);
  assert.deepEqual(endState(s), before);
  const again = s.feed(' return a[1]; /* "]" */]');
  assert.deepEqual(again, first);
  // Restore can also move forward again to a later snapshot.
  const later = s.snapshot();
  const laterState = endState(s);
  s.restore(cp);
  s.restore(later);
  assert.deepEqual(endState(s), laterState);
  assert.equal(regions(s.feed(" [C: 1]")).length, 1);
});

test("rewind to every offset equals a fresh scan of the kept text", () => {
  const pieces = ["Hi [C", ": int a[3]; ", "char c = ']';", " return 2;]", " =", " VM"];
  const injection = "[2]";
  const tail = [" and ```c\n", "x;\n```\n [LISP: (+ 1 ", "2)]"];
  const full = new RegionScanner();
  for (const p of pieces) full.feed(p);
  full.inject(injection);
  for (const p of tail) full.feed(p);
  const total = full.text;
  for (let offset = 0; offset <= total.length; offset++) {
    const rewound = new RegionScanner();
    for (const p of pieces) rewound.feed(p);
    rewound.inject(injection);
    for (const p of tail) rewound.feed(p);
    rewound.rewind(offset);
    // Reference: the same segments, cut at offset, fed to a fresh scanner.
    const fresh = new RegionScanner();
    let at = 0;
    const kinds: Array<[string, boolean]> = [
      [pieces.join(""), false],
      [injection, true],
      [tail.join(""), false],
    ];
    for (const [segment, injected] of kinds) {
      const kept = segment.slice(0, Math.max(0, offset - at));
      if (kept) injected ? fresh.inject(kept) : fresh.feed(kept);
      at += segment.length;
    }
    assert.deepEqual(endState(rewound), endState(fresh), `offset ${offset}`);
    // And both continue identically.
    assert.deepEqual(rewound.feed("]`` x"), fresh.feed("]`` x"), `offset ${offset}`);
  }
  assert.throws(() => full.rewind(total.length + 1), /outside 0\.\./);
});

// ---- don't duplicate ----

test("model-written ` = VM[` after a bracket region is recognised, token by token", () => {
  const s = new RegionScanner();
  s.feed("6*7 = [C: 6*7");
  const end = s.feed("]");
  assert.equal(regions(end)[0]?.source, " 6*7");
  assert.equal(s.awaitingResult()?.source, " 6*7");
  assert.deepEqual(s.feed(" ="), []);
  assert.equal(s.resultWritten(), " =");
  assert.deepEqual(s.feed(" VM"), []);
  const ev = s.feed("[");
  assert.equal(ev.length, 1);
  assert.equal(ev[0]!.type, "result-prefix");
  if (ev[0]!.type === "result-prefix") {
    assert.equal(ev[0].offset, s.text.length);
    assert.equal(ev[0].written, " = VM[");
  }
  assert.equal(s.resultWritten(), " = VM[");
  s.inject("42]");
  assert.equal(s.awaitingResult(), null);
  assert.equal(s.text, "6*7 = [C: 6*7] = VM[42]");
});

test("prefix variants: spacing, and the closing token carrying part of it", () => {
  for (const written of ["= VM[", " =VM[", "\t=  VM[", " = VM["]) {
    const { events } = scan(["[C: 1]", written]);
    assert.equal(events.at(-1)?.type, "result-prefix", JSON.stringify(written));
  }
  const { events, s } = scan(["[C: 1] ="]);
  assert.equal(events.length, 2);
  assert.equal(s.resultWritten(), " =");
  assert.equal(matchResultPrefix(s.resultWritten()), "equals");
});

test("a token that runs past `VM[` leaves the injection point at the prefix", () => {
  const s = new RegionScanner();
  const ev = s.feed("[C: 6*7] = VM[4");
  assert.equal(ev.at(-1)?.type, "result-prefix");
  assert.equal(s.resultWritten(), " = VM[");
  const point = s.awaitingResult()!.end + s.resultWritten().length;
  assert.ok(s.offset > point);
  s.rewind(point);
  assert.equal(s.resultWritten(), " = VM[");
  s.inject("42]");
  assert.equal(s.text, "[C: 6*7] = VM[42]");
});

test("anything else after the region declines the result", () => {
  for (const [after, at] of [
    [".", 0],
    [" = 5", 3],
    ["\n= VM[", 0],
    [" = vm[", 3],
  ] as const) {
    const { events, s } = scan(["[C: 1]", after]);
    const declined = events.find((e) => e.type === "result-declined");
    assert.ok(declined && declined.type === "result-declined", after);
    assert.equal(declined.offset, 6 + at, after);
    assert.equal(s.awaitingResult(), null, after);
    assert.equal(s.resultWritten(), "");
  }
  // A region right after the region is still found.
  const { events } = scan(["[C: 1][C: 2]"]);
  assert.deepEqual(
    events.map((e) => e.type),
    ["region-start", "region-end", "result-declined", "region-start", "region-end"],
  );
});

test("the model repeating ` = VM[` after an injected result is reported", () => {
  const s = new RegionScanner();
  s.feed("[C: 1+2]");
  s.inject(" = VM[3]");
  const ev = [...s.feed(" ="), ...s.feed(" VM"), ...s.feed("[")];
  assert.deepEqual(
    ev.map((e) => e.type),
    ["result-duplicate"],
  );
  if (ev[0]!.type === "result-duplicate") {
    assert.equal(s.text.slice(ev[0].start, ev[0].offset), " = VM[");
    s.rewind(ev[0].start);
  }
  assert.equal(s.text, "[C: 1+2] = VM[3]");
  // Ordinary text after the injection raises nothing.
  const t = new RegionScanner();
  t.feed("[C: 1+2]");
  t.inject(" = VM[3]");
  assert.deepEqual(t.feed(" so the answer is 3 = VM"), []);
  assert.deepEqual(t.feed("["), []);
});

test("fences have no result watch", () => {
  const { events, s } = scan(["```c\nx;\n```", " = VM["]);
  assert.deepEqual(
    events.map((e) => e.type),
    ["region-start", "region-end"],
  );
  assert.equal(s.awaitingResult(), null);
});

// ---- limits ----

test("unterminated and overlong regions are abandoned and scanning resumes", () => {
  const s = new RegionScanner({ maxRegionChars: 10 });
  const ev = s.feed("[C: 0123456789abc [C: 1]");
  assert.deepEqual(
    ev.map((e) => e.type),
    ["region-start", "region-abandoned", "region-start", "region-end"],
  );
  assert.equal(ev[1]?.type === "region-abandoned" && ev[1].reason, "too-long");
  assert.equal(regions(ev)[0]?.source, " 1");
  const t = new RegionScanner();
  t.feed("```c\nint x;");
  const fin = t.finish();
  assert.deepEqual(
    fin.map((e) => e.type === "region-abandoned" && [e.language, e.syntax, e.start, e.reason]),
    [["c", "fence", 0, "unterminated"]],
  );
  assert.equal(t.openRegion(), null);
});
