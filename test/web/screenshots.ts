// Captures the screenshots in docs/screens/web-*.png that docs/web.md shows, from a real
// `ruffian serve` on ruffian-nano in headless Chromium: `npm run screens:web`.
// page.$eval callbacks run in the browser, hence the DOM types.
/// <reference lib="dom" />
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../../src/paths.js";
import { ask, finished, launchBrowser, openUi, question, serve, waitForModel } from "./helpers.js";

const out = join(packageRoot, "docs", "screens");
mkdirSync(out, { recursive: true });
const server = await serve(["--glass-box"]);
const browser = await launchBrowser();
try {
  const desktop = { width: 1280, height: 860 };
  const { page } = await openUi(browser, server.url, desktop);
  await waitForModel(page);
  await ask(page, question);
  // Show a token's alternatives, as a keyboard user would.
  await page.focus('#panel-chat .answer .tok[tabindex="0"]');
  for (let i = 0; i < 8; i++) await page.keyboard.press("ArrowRight");
  await page.screenshot({ path: join(out, "web-chat.png") });

  await page.click("#tab-experiments");
  await page.click('[data-experiment="rewind-memo"]');
  await finished(page, "#panel-experiments");
  await new Promise((r) => setTimeout(r, 1600)); // the rewind animation ends within 1.5 s
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(out, "web-experiment.png") });

  await page.click("#tab-playground");
  await page.$eval("#playground-code", (e) => (e as HTMLTextAreaElement).select());
  await page.keyboard.press("Backspace");
  await page.type(
    "#playground-code",
    "int square(int x) { return x * x; }\n\nint main() {\n  int total = 0;\n  for (int i = 1; i <= 10; i++) total += square(i)\n  return total;\n}\n",
  );
  await page.click("#panel-playground button[type=submit]");
  await page.waitForSelector(".exec-error");
  await page.screenshot({ path: join(out, "web-playground.png") });

  const phone = await openUi(browser, server.url, { width: 375, height: 812 });
  await waitForModel(phone.page);
  await phone.page.click(".theme-toggle");
  await ask(phone.page, question);
  await phone.page.screenshot({ path: join(out, "web-phone-dark.png") });
  await phone.page.evaluate(() => localStorage.removeItem("ruffian.theme"));
} finally {
  await browser.close();
  await server.stop();
}
console.log(`screenshots written to ${out}`);
