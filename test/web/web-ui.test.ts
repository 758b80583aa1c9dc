// The web UI in a real headless Chromium against the real `ruffian serve` on ruffian-nano: the
// streamed answer with its region and result styled, the hook console of an experiment, the live
// entropy plot, the playground's compile error, the API key prompt, and a stopped server.
// page.$eval callbacks run in the browser, hence the DOM types.
/// <reference lib="dom" />
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { Browser } from "puppeteer-core";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../../src/paths.js";
import { runC } from "../../src/vm/run-c.js";
import {
  ask,
  complete,
  finished,
  launchBrowser,
  openUi,
  question,
  serve,
  waitForModel,
  type Served,
} from "./helpers.js";

let browser: Browser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
});

describe("web UI on ruffian serve (ruffian-nano)", () => {
  let server: Served;
  before(async () => {
    server = await serve();
  });
  after(async () => {
    await server?.stop();
  });

  test("the page is served at / with its bundle, names the model, and asks nothing of the network", async () => {
    const page = await browser.newPage();
    const requested: string[] = [];
    page.on("request", (r) => requested.push(r.url()));
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(server.url);
    assert.equal(await waitForModel(page), "ruffian-nano");
    // The header gives the model's size (its file, 3.8 MB for ruffian-nano) beside its name.
    assert.match(await page.$eval("header .model", (e) => e.textContent ?? ""), /\d\.\d MB/);
    await ask(page, question);
    const outside = requested.filter((u) => !u.startsWith(server.url + "/"));
    assert.deepEqual(outside, []);
    for (const asset of ["/app.js", "/app.css"])
      assert.ok(requested.includes(server.url + asset), `${asset} in ${requested}`);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test("a typed question streams the answer with the region and 1817517 styled as such", async () => {
    const { page, errors } = await openUi(browser, server.url);
    await waitForModel(page);
    const answer = await ask(page, question);
    assert.match(answer, /1817517/);
    const region = await page.$$eval("#panel-chat .seg.region", (els) =>
      els.map((e) => e.textContent).join(""),
    );
    assert.match(region, /^\[C: [^\]]*4821[^\]]*\]$/);
    const result = await page.$$eval("#panel-chat .seg.result", (els) =>
      els.map((e) => e.textContent).join(""),
    );
    assert.match(result, /VM\[1817517\]/);
    // The two styles really differ on screen.
    const colours = await page.$$eval("#panel-chat .seg.region, #panel-chat .seg.result", (els) => [
      ...new Set(els.map((e) => getComputedStyle(e).backgroundColor)),
    ]);
    assert.equal(colours.length, 2, `region and result backgrounds: ${colours}`);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test("the entropy chart has one point per generated token", async () => {
    const { page } = await openUi(browser, server.url);
    await waitForModel(page);
    await ask(page, question);
    const points = await page.$eval('#panel-chat .chart[data-series="entropy"]', (e) =>
      Number((e as HTMLElement).dataset.points),
    );
    // The same request without streaming, over plain HTTP: the tokens the server generated.
    const { body } = await complete(server.url, { max_tokens: 128, logprobs: true });
    const generated: Array<{ token: string }> = body.choices[0].logprobs.content;
    assert.ok(points > 5, `points: ${points}`);
    assert.equal(points, generated.length);
    // And every one of them is a token span in the page's answer, in order.
    const spans = await page.$$eval("#panel-chat .answer .tok", (els) =>
      els.map((e) => ({ piece: (e as HTMLElement).dataset.piece, text: e.textContent ?? "" })),
    );
    const tokens: string[] = [];
    for (const span of spans) {
      const last = tokens.length - 1;
      if (last >= 0 && spans[spans.indexOf(span) - 1]?.piece === span.piece)
        tokens[last] += span.text;
      else tokens.push(span.text);
    }
    assert.deepEqual(
      tokens,
      generated.map((t) => t.token),
    );
    // uPlot drew them: the canvas exists and has a non-zero size.
    const canvas = await page.$eval('#panel-chat .chart[data-series="entropy"] canvas', (c) => ({
      w: (c as HTMLCanvasElement).width,
      h: (c as HTMLCanvasElement).height,
    }));
    assert.ok(canvas.w > 0 && canvas.h > 0);
    await page.close();
  });

  test("keyboard only: focus a token with the arrow keys to see its alternatives", async () => {
    const { page } = await openUi(browser, server.url);
    await waitForModel(page);
    await ask(page, question);
    await page.focus('#panel-chat .answer .tok[tabindex="0"]');
    await page.keyboard.press("ArrowRight");
    const tip = await page.waitForSelector("#panel-chat .token-tip");
    const rows = await tip!.$$eval("li", (els) => els.map((e) => (e as HTMLElement).innerText));
    assert.ok(rows.length >= 2, `alternatives: ${rows}`);
    assert.ok(
      rows.every((r) => /\d+(\.\d)?%/.test(r)),
      `each row has a probability: ${rows}`,
    );
    const focused = await page.evaluate(() => document.activeElement?.classList.contains("tok"));
    assert.equal(focused, true);
    await page.close();
  });

  test("a hook experiment fills the hook console, and its lines stay out of the text", async () => {
    const { page } = await openUi(browser, server.url);
    await waitForModel(page);
    await page.click("#tab-experiments");
    await page.click('[data-experiment="entropy-diary"]');
    const answer = await finished(page, "#panel-experiments");
    const lines = await page.$$eval("#panel-experiments .hook-line", (els) =>
      els.map((e) => ({
        step: e.querySelector(".hook-step")?.textContent ?? "",
        seq: e.querySelector(".hook-seq")?.textContent ?? "",
        text: e.querySelector(".hook-text")?.textContent ?? "",
      })),
    );
    assert.ok(lines.length >= 10, `hook lines: ${lines.length}`);
    assert.deepEqual(
      lines.slice(0, 3).map((l) => l.step),
      ["step 0", "step 1", "step 2"],
    );
    assert.ok(lines.every((l) => l.seq.startsWith("seq ") && /^H=\d+\.\d{3} nats/.test(l.text)));
    for (const line of lines) assert.ok(!answer.includes(line.text), `leaked: ${line.text}`);
    assert.doesNotMatch(answer, /H=|top1=/);
    assert.match(answer, /1817517/);
    // The code sent was the editable code shown on the page.
    const code = await page.$eval("#experiment-code", (e) => (e as HTMLTextAreaElement).value);
    assert.match(code, /hook_set\("diary", 40\)/);
    await page.close();
  });

  test("an edited experiment runs its new code; a failing region's VM error is styled as such", async () => {
    const { page } = await openUi(browser, server.url);
    await waitForModel(page);
    await page.click("#tab-experiments");
    await page.click('[data-experiment="entropy-diary"]');
    await finished(page, "#panel-experiments");
    // Replace the code with a hook that makes the model open its answer with [C: 1/0].
    const forcing = [
      'char want[] = " [C: 1/0]";',
      "int ids[16]; int n = 0; int at = 0;",
      "int token_of(char c) { char b[32];",
      "  for (int id = 0; id < tok_count(); id++) if (tok_str(id, b) == 1 && b[0] == c) return id;",
      "  return -1; }",
      "void force(int step) { if (at < n) logit_set(ids[at++], logit_get(logit_argmax()) + 100000); }",
      'int main() { for (int i = 0; want[i]; i++) ids[n++] = token_of(want[i]); hook_set("force", n); return 0; }',
    ].join("\n");
    await page.$eval("#experiment-code", (e) => (e as HTMLTextAreaElement).select());
    await page.keyboard.press("Backspace");
    await page.type("#experiment-code", forcing);
    await page.click("#panel-experiments form.experiment button[type=submit]");
    // Wait for the new run's answer itself: a short run can end before a poll sees it streaming.
    await page.waitForFunction(
      () => {
        const answers = document.querySelectorAll<HTMLElement>("#panel-experiments .answer");
        const last = answers[answers.length - 1];
        return last?.dataset.phase !== "streaming" && last?.innerText.includes("[C: 1/0]");
      },
      { timeout: 120_000 },
    );
    const answer = await finished(page, "#panel-experiments");
    assert.match(answer, /^ \[C: 1\/0\] = VM\[error: /);
    const failed = await page.$eval("#panel-experiments .seg.vm-error", (e) => e.textContent);
    assert.match(failed, /^ = VM\[error: [^\]]*division by zero[^\]]*\]$/);
    // The first region is the forced one (the model may write more after the error).
    const region = await page.$$eval("#panel-experiments .seg.region", (els) =>
      els.map((e) => e.textContent).join(""),
    );
    assert.ok(region.startsWith("[C: 1/0]"), region);
    await page.close();
  });

  test("the playground shows a compile error with its line:col, marked in the editor", async () => {
    const { page } = await openUi(browser, server.url);
    await waitForModel(page);
    await page.click("#tab-playground");
    const source = "int main() {\n  int x = 3;\n  return x + ;\n}\n";
    await page.$eval("#playground-code", (e) => {
      (e as HTMLTextAreaElement).select();
    });
    await page.keyboard.press("Backspace");
    await page.type("#playground-code", source);
    await page.keyboard.down("Control");
    await page.keyboard.press("Enter");
    await page.keyboard.up("Control");
    await page.waitForSelector(".exec-error");
    const expected = runC(source);
    assert.equal(expected.ok, false);
    if (expected.ok) return;
    const where = `${expected.error.line}:${expected.error.column}`;
    const shown = await page.$eval(".exec-error", (e) => (e as HTMLElement).innerText);
    assert.ok(shown.includes(where), `${where} in ${shown}`);
    assert.ok(shown.includes(expected.error.message));
    const marked = await page.$$eval(".editor .error-line", (els) =>
      els.map((e) => (e as HTMLElement).dataset.line),
    );
    assert.deepEqual(marked, [String(expected.error.line)]);
    // The position link puts the caret on the error.
    await page.click(".exec-error .position");
    const caret = await page.$eval("#playground-code", (e) => {
      const area = e as HTMLTextAreaElement;
      const before = area.value.slice(0, area.selectionStart).split("\n");
      return `${before.length}:${before.at(-1)!.length + 1}`;
    });
    assert.equal(caret, where);
    await page.close();
  });
});

describe("the experiments gallery (ruffian serve --glass-box)", () => {
  let server: Served;
  before(async () => {
    server = await serve(["--glass-box"]);
  });
  after(async () => {
    await server?.stop();
  });
  const dir = join(packageRoot, "web", "src", "experiments");
  const programs = readdirSync(dir).filter((f) => f.endsWith(".c"));

  test("shows every experiment program, one button each", async () => {
    const { page } = await openUi(browser, server.url);
    await waitForModel(page);
    const shown = await page.$$eval("[data-experiment]", (els) =>
      els.map((e) => (e as HTMLElement).dataset.experiment),
    );
    assert.deepEqual([...shown].sort(), programs.map((f) => f.replace(/\.c$/, "")).sort());
    await page.close();
  });

  test("every experiment's hook program runs on the model and prints to the hook console", async () => {
    for (const file of programs) {
      const { status, body } = await complete(server.url, {
        max_tokens: 48,
        ruffian: { hook: readFileSync(join(dir, file), "utf8") },
      });
      assert.equal(status, 200, `${file}: ${body.error?.message}`);
      assert.ok(body.ruffian.hookConsole.length > 0, `${file} printed nothing`);
    }
  });

  test("a rewind leaves its memo as a footnote and the answer reads as the final timeline", async () => {
    const { page } = await openUi(browser, server.url);
    await waitForModel(page);
    await page.click("#tab-experiments");
    await page.click('[data-experiment="rewind-memo"]');
    const answer = await finished(page, "#panel-experiments");
    const note = await page.waitForSelector("#panel-experiments .footnotes .memo");
    assert.match(
      await note!.evaluate((e) => e.textContent ?? ""),
      /^\[explored: "peak entropy \d+ millinats, try again" → rewound\]$/,
    );
    // The erasing animation ends (at most 1.5 s) and leaves the answer as the server's final text.
    await page.waitForSelector("#panel-experiments .seg.erasing", { hidden: true });
    assert.match(answer, /^ \[C: 4821\*377\] = VM\[1817517\]/);
    const lines = await page.$$eval("#panel-experiments .hook-text", (els) =>
      els.map((e) => e.textContent ?? ""),
    );
    assert.ok(lines.some((l) => l.startsWith("previous timeline said: peak entropy")));
    await page.close();
  });
});

describe("web UI with --api-key", () => {
  let server: Served;
  before(async () => {
    server = await serve(["--api-key", "sesame"]);
  });
  after(async () => {
    await server?.stop();
  });

  test("asks for the key once and keeps it in localStorage", async () => {
    const { page } = await openUi(browser, server.url);
    await page.waitForSelector("dialog.key-dialog[open]");
    await page.type("#api-key", "sesame");
    await page.keyboard.press("Enter");
    assert.equal(await waitForModel(page), "ruffian-nano");
    const answer = await ask(page, question);
    assert.match(answer, /1817517/);
    await page.reload();
    assert.equal(await waitForModel(page), "ruffian-nano");
    const open = await page.$("dialog.key-dialog[open]");
    assert.equal(open, null);
    assert.equal(await page.evaluate(() => localStorage.getItem("ruffian.apiKey")), "sesame");
    await page.close();
  });
});

describe("web UI when the server stops", () => {
  test("the page shows an error message, not a blank page", async () => {
    const server = await serve();
    const { page } = await openUi(browser, server.url);
    await waitForModel(page);
    await server.stop();
    await page.focus("#message");
    await page.keyboard.type(question);
    await page.keyboard.press("Enter");
    const alert = await page.waitForSelector("#panel-chat .answer-wrap .error[role=alert]");
    const text = await alert!.evaluate((e) => (e as HTMLElement).innerText);
    assert.match(text, /Cannot reach the Ruffian server/);
    // The health poll also raises the banner, and the rest of the page is still there.
    const banner = await page.waitForSelector(".banner[role=alert]");
    assert.match(await banner!.evaluate((e) => (e as HTMLElement).innerText), /ruffian serve/);
    assert.ok(await page.$("#tab-playground"));
    await page.close();
  });
});
