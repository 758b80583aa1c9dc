// Shared by the web UI tests and the screenshot script: the real `ruffian serve` started as a
// child process on a free loopback port, and Debian's headless Chromium driven by puppeteer-core
// (never a downloaded browser).
// page.$eval callbacks run in the browser, hence the DOM types.
/// <reference lib="dom" />
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { packageRoot } from "../../src/paths.js";

export interface Served {
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Starts `ruffian serve --port 0 …` and resolves with its URL once it serves (it prints the URL
 * once when it listens and again, with the model, when the model is loaded). */
export function serve(args: string[] = []): Promise<Served> {
  const child = spawn(
    process.execPath,
    [join(packageRoot, "bin", "ruffian.js"), "serve", "--port", "0", ...args],
    { cwd: packageRoot, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  return new Promise((resolve, reject) => {
    const onData = (data: Buffer) => {
      output += data.toString();
      const found = /(https?:\/\/[\d.]+:\d+) · model/.exec(output);
      if (!found) return;
      child.stdout!.off("data", onData);
      resolve({
        url: found[1]!,
        process: child,
        stop: () =>
          new Promise((done) => {
            if (child.exitCode !== null) return done();
            child.once("exit", () => done());
            child.kill("SIGTERM");
          }),
      });
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
    child.once("exit", (code) => reject(new Error(`ruffian serve exited (${code}): ${output}`)));
  });
}

/** Debian's chromium (apt-get install chromium), or $CHROMIUM_PATH. */
export function chromiumPath(): string {
  const candidates = [process.env.CHROMIUM_PATH, "chromium", "chromium-browser"].filter(
    (c): c is string => !!c,
  );
  for (const candidate of candidates) {
    const found = spawnSync("sh", ["-c", `command -v "${candidate}"`], { encoding: "utf8" });
    if (found.status === 0 && found.stdout.trim()) return found.stdout.trim();
  }
  throw new Error("no chromium found: install Debian's package (apt-get install chromium)");
}

export function launchBrowser(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: chromiumPath(),
    headless: true,
    // Running as root in CI needs --no-sandbox; the page only talks to loopback.
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
}

/** A page on the served UI, with page errors collected so a test can assert there were none. */
export async function openUi(
  browser: Browser,
  url: string,
  viewport = { width: 1280, height: 900 },
): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.setViewport(viewport);
  await page.goto(url);
  return { page, errors };
}

/** Waits until the model name is shown (the page read /v1/models). */
export async function waitForModel(page: Page): Promise<string> {
  await page.waitForSelector("header .model strong");
  return page.$eval("header .model strong", (e) => e.textContent ?? "");
}

/** Types a message into the chat and waits for the answer to finish. Returns the answer's text. */
export async function ask(page: Page, question: string): Promise<string> {
  await page.focus("#message");
  await page.keyboard.type(question);
  await page.keyboard.press("Enter");
  return finished(page, "#panel-chat");
}

/** Waits for the last answer inside `scope` to end; returns its text. */
export async function finished(page: Page, scope: string): Promise<string> {
  const selector = `${scope} .answer:not([data-phase="streaming"])`;
  await page.waitForSelector(selector, { timeout: 120_000 });
  const answers = await page.$$eval(`${scope} .answer`, (els) =>
    els.map((e) => (e as HTMLElement).innerText),
  );
  return answers.at(-1) ?? "";
}

export const question = "What is 4821 times 377?";

/** The question as a plain, non-streaming, greedy chat request over HTTP (no page involved). */
export async function complete(
  url: string,
  extra: Record<string, unknown>,
): Promise<{ status: number; body: any }> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "ruffian-nano",
      messages: [{ role: "user", content: question }],
      temperature: 0,
      ...extra,
    }),
  });
  return { status: response.status, body: await response.json() };
}
