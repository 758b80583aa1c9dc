// Scanner → real VM (C, CALC, Lisp) → injection, over a token stream cut the way a tokenizer
// might: what the decode loop does between sampling steps, minus the model.
import { test } from "node:test";
import assert from "node:assert/strict";
import { RegionScanner, type Region } from "../../src/decode/scanner.js";
import { formatInjection } from "../../src/decode/injection.js";
import { runC, type VmOutcome } from "../../src/vm/index.js";
import { runCalc } from "../../src/calc/calc.js";
import { runLisp } from "../../src/lisp/index.js";

function run(region: Region): VmOutcome {
  if (region.language === "calc") return runCalc(region.source);
  if (region.language === "lisp") return runLisp(region.source);
  return runC(region.source);
}

/** Feeds pieces; injects each region's result as soon as it closes. Text a token carried past
 * the injection point is dropped (the loop would erase that token and let the model continue
 * after the result), so the model never writes past a region without seeing its result. */
function generate(pieces: string[]): { text: string; sources: string[]; dropped: string[] } {
  const scanner = new RegionScanner();
  const sources: string[] = [];
  const dropped: string[] = [];
  for (const piece of pieces) {
    for (const ev of scanner.feed(piece)) {
      if (ev.type !== "region-end") continue;
      const region = ev.region;
      sources.push(region.source);
      const written = region.syntax === "bracket" ? scanner.resultWritten() : "";
      const point = region.end + written.length;
      if (scanner.offset > point) {
        dropped.push(scanner.text.slice(point));
        scanner.rewind(point);
      }
      scanner.inject(formatInjection(region, run(region), { written }));
      break; // later events of this piece described dropped text
    }
  }
  return { text: scanner.text, sources, dropped };
}

test("bracket regions in every language get their result right after them", () => {
  const { text } = generate([
    "847",
    " x 293 =",
    " [",
    "C",
    ":",
    " 847",
    "*",
    "293",
    "]",
    ", 7*6 = [CALC",
    ":7*6] =",
    " and (+ 1 (* 2 3)) is [LISP: (+ 1 (* 2 3))",
    "]",
    ".",
  ]);
  assert.equal(
    text,
    "847 x 293 = [C: 847*293] = VM[248171], 7*6 = [CALC:7*6] = VM[42] and (+ 1 (* 2 3)) is [LISP: (+ 1 (* 2 3))] = VM[7].",
  );
});

test("a fenced program gets an output block; errors come back with their position", () => {
  const { text, dropped } = generate([
    "Sum:\n``",
    "`c\nint main() {\n  int s = 0;\n  for (int i = 1; i <= 100; i++) s += i;\n",
    '  printf("%d\\n", s);\n  return 0;\n}\n``',
    "`\n",
    "Then [C: 1/",
    "0] done",
  ]);
  assert.ok(text.includes("}\n```\n```output\n5050\n```\n"), JSON.stringify(text));
  assert.ok(
    text.endsWith("Then [C: 1/0] = VM[error: division by zero at 1:3]"),
    JSON.stringify(text),
  );
  assert.deepEqual(dropped, ["\n", " done"]);
});

test("brackets inside literals reach the VM intact", () => {
  const { text, sources } = generate(['[C: char *s = "]', '"; return s[0];', "]"]);
  assert.deepEqual(sources, [' char *s = "]"; return s[0];']);
  assert.equal(text, '[C: char *s = "]"; return s[0];] = VM[93]');
});
