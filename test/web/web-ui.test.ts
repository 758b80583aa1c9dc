// The web UI in a real headless Chromium against the real `ruffian serve` on ruffian-nano: the
// streamed answer with its region and result styled, the hook console of an experiment, the live
// entropy plot, the playground's compile error, the API key prompt, and a stopped server.
// page.$eval callbacks run in the browser, hence the DOM types.
/// <reference lib="dom" />
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { Browser } from "puppeteer-core";
import { runC } from "../../src/vm/session.js";
import {
  ask,
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

  test("the page is served at / with its bundle, and names the model", async () => {
    const { page, errors } = await openUi(browser, server.url);
    assert.equal(await waitForModel(page), "ruffian-nano");
    const scripts = await page.$$eval("script[src]", (els) =>
      els.map((e) => (e as HTMLScriptElement).src),
    );
    assert.ok(
      scripts.every((src) => src.startsWith(server.url)),
      `only local assets: ${scripts}`,
    );
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
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "ruffian-nano",
        messages: [{ role: "user", content: question }],
        max_tokens: 128,
        temperature: 0,
        logprobs: true,
      }),
    });
    const body = (await response.json()) as {
      choices: Array<{ logprobs: { content: Array<{ token: string }> } }>;
    };
    const generated = body.choices[0]!.logprobs.content;
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
