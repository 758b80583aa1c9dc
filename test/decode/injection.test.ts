// Injection formats: ` = VM[…]` after brackets, output fences after fences, errors, truncation,
// framing that results cannot break, and completion of a model-written ` = VM[`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { escapeBracketBody, formatInjection, truncateResult } from "../../src/decode/injection.js";
import { RegionScanner, matchResultPrefix } from "../../src/decode/scanner.js";
import type { VmError, VmOutcome } from "../../src/vm/result.js";

const stats = { compileMs: 0.1, runMs: 0.1, instructions: 10, memoryBytes: 1024 };

function ok(text: string): VmOutcome {
  return {
    ok: true,
    text,
    stdout: text,
    value: { ctype: "char *", value: text },
    outputTruncated: false,
    stats,
  };
}

function failed(error: VmError): VmOutcome {
  return { ok: false, error, stdout: "", stats };
}

const bracket = { syntax: "bracket" as const };
const fence = { syntax: "fence" as const };

/** The framing rule a reader applies after `VM[`: returns the index of the closing `]`. */
function closingIndex(text: string, from: number): number {
  let depth = 0;
  for (let i = from; i < text.length; i++) {
    const ch = text[i];
    if (ch === "\\") i++;
    else if (ch === "[") depth++;
    else if (ch === "]" && --depth < 0) return i;
  }
  return -1;
}

test("bracket results and errors", () => {
  assert.equal(formatInjection(bracket, ok("248171")), " = VM[248171]");
  assert.equal(
    formatInjection(
      bracket,
      failed({ kind: "runtime", message: "division by zero", line: 3, column: 12 }),
    ),
    " = VM[error: division by zero at 3:12]",
  );
  assert.equal(
    formatInjection(
      bracket,
      failed({ kind: "limit", message: "instruction limit exceeded", line: 0, column: 0 }),
    ),
    " = VM[error: instruction limit exceeded]",
  );
  assert.equal(formatInjection(bracket, ok("5050\n")), " = VM[5050]");
  assert.equal(formatInjection(bracket, ok("a\nb\r\n")), " = VM[a\nb]");
  assert.equal(formatInjection(bracket, ok("")), " = VM[]");
});

test("brackets in results cannot break the framing", () => {
  assert.equal(formatInjection(bracket, ok("[1, [2, 3]]")), " = VM[[1, [2, 3]]]");
  assert.equal(formatInjection(bracket, ok("a]b")), " = VM[a\\]b]");
  assert.equal(escapeBracketBody("x[\\"), "x\\[\\\\");
  assert.equal(
    formatInjection(
      bracket,
      failed({ kind: "syntax", message: "unexpected ']'", line: 1, column: 5 }),
    ),
    " = VM[error: unexpected '\\]' at 1:5]",
  );
  // Every string over the troublesome alphabet keeps the closing `]` at the very end.
  const alphabet = ["[", "]", "\\", "a"];
  let checked = 0;
  const grow = (prefix: string): void => {
    const injected = formatInjection(bracket, ok(prefix));
    assert.equal(
      closingIndex(injected, " = VM[".length),
      injected.length - 1,
      JSON.stringify(prefix),
    );
    checked++;
    if (prefix.length < 6) for (const ch of alphabet) grow(prefix + ch);
  };
  grow("");
  assert.equal(checked, (4 ** 7 - 1) / 3);
});

test("completion of what the model already wrote after the region", () => {
  const written = ["", " ", " =", " = ", "=", " = V", " = VM", " = VM[", "\t=VM"];
  for (const w of written) {
    const injected = formatInjection(bracket, ok("42"), { written: w });
    const whole = w + injected;
    assert.equal(
      matchResultPrefix(whole.slice(0, whole.indexOf("[") + 1)),
      "open",
      JSON.stringify(w),
    );
    assert.ok(whole.endsWith("VM[42]"), JSON.stringify(whole));
    assert.equal(whole.split("=").length, 2, `one "=" in ${JSON.stringify(whole)}`);
  }
  assert.equal(formatInjection(bracket, ok("42"), { written: " =" }), " VM[42]");
  assert.equal(formatInjection(bracket, ok("42"), { written: " = VM[" }), "42]");
});

test("a decode loop wiring scanner and injection writes the result once", () => {
  const outcome = ok("42");
  // Runtime injects as soon as the region closes; the closing token carried " =".
  const eager = new RegionScanner();
  for (const piece of ["6*7 = [C", ": 6*", "7] ="]) {
    for (const ev of eager.feed(piece))
      if (ev.type === "region-end")
        eager.inject(formatInjection(ev.region, outcome, { written: eager.resultWritten() }));
  }
  assert.equal(eager.text, "6*7 = [C: 6*7] = VM[42]");
  // Runtime waits for the model to write ` = VM[` and completes it.
  const lazy = new RegionScanner();
  for (const piece of ["6*7 = [C: 6*7]", " =", " VM", "[", "\n"]) {
    for (const ev of lazy.feed(piece))
      if (ev.type === "result-prefix")
        lazy.inject(formatInjection(ev.region, outcome, { written: ev.written }));
  }
  assert.equal(lazy.text, "6*7 = [C: 6*7] = VM[42]\n");
});

test("fence results become an output block", () => {
  assert.equal(formatInjection(fence, ok("5050")), "\n```output\n5050\n```\n");
  assert.equal(formatInjection(fence, ok("5050\n"), { written: "\n" }), "```output\n5050\n```\n");
  assert.equal(formatInjection(fence, ok("")), "\n```output\n```\n");
  assert.equal(
    formatInjection(
      fence,
      failed({ kind: "runtime", message: "division by zero", line: 3, column: 12 }),
    ),
    "\n```output\nerror: division by zero at 3:12\n```\n",
  );
  // A result holding backtick runs gets a longer fence.
  const tricky = "a ```\n````\nb";
  const block = formatInjection(fence, ok(tricky));
  assert.equal(block, "\n`````output\na ```\n````\nb\n`````\n");
  // The generic fence closer (a run at least as long as the opener) appears only at the end.
  const opener = block.match(/^\n(`+)output\n/)![1]!;
  const closers = [...block.matchAll(new RegExp(`^${opener}\\s*$`, "gm"))];
  assert.equal(closers.length, 1);
  assert.equal(closers[0]!.index, block.length - opener.length - 1);
});

test("long results are truncated with a marker, under a configurable cap", () => {
  const long = "x".repeat(5000);
  const injected = formatInjection(bracket, ok(long));
  assert.equal(injected, ` = VM[${"x".repeat(1000)} … (4000 more characters)]`);
  assert.equal(
    formatInjection(bracket, ok(long), { maxChars: 10 }),
    ` = VM[${"x".repeat(10)} … (4990 more characters)]`,
  );
  // Cut at a line break near the cap.
  const lines = Array.from({ length: 30 }, (_, i) => `line ${i}`).join("\n");
  const cut = truncateResult(lines, 100);
  const kept = cut.slice(0, cut.indexOf("…"));
  assert.ok(kept.endsWith("\n") && kept.length <= 100 && kept.length >= 80, JSON.stringify(kept));
  assert.equal(cut.slice(kept.length), `… (${lines.length - kept.length} more characters)`);
  // Never splits a surrogate pair.
  const emoji = "😀".repeat(10);
  const e = truncateResult(emoji, 5);
  assert.equal(e, "😀😀 … (16 more characters)");
  assert.equal(truncateResult("short", 5), "short");
  assert.throws(
    () => formatInjection(bracket, ok("1"), { maxChars: 0 }),
    /maxChars must be a positive integer/,
  );
  // Truncating a fence body keeps the framing.
  const block = formatInjection(fence, ok("`".repeat(50)), { maxChars: 20 });
  assert.ok(block.startsWith("\n" + "`".repeat(21) + "output\n"), block);
});
