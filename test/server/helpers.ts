// Shared by the server tests: a real server on a loopback port (port 0) over a shipped model, the
// official openai client pointed at it, and small readers for /metrics and raw HTTP.
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import OpenAI from "openai";
import { startServer, type RunningServer, type ServeOptions } from "../../src/server/server.js";
import { nanoModelPath, packageRoot } from "../../src/paths.js";

export async function serve(options: Partial<ServeOptions> = {}): Promise<RunningServer> {
  return startServer({ model: nanoModelPath, port: 0, ...options });
}

export function client(server: RunningServer, apiKey = "unused"): OpenAI {
  return new OpenAI({ baseURL: `${server.url}/v1`, apiKey, maxRetries: 0 });
}

/** A Prometheus sample from /metrics (0 when the series has no sample yet). */
export async function metric(server: RunningServer, series: string): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(series + " "));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

/** Polls until `check` holds; the test runner's timeout bounds a condition that never comes. */
export async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 5));
}

export async function post(
  server: RunningServer,
  path: string,
  body: string | object,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; json: any }> {
  const res = await fetch(server.url + path, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = { unparsable: text };
  }
  return { status: res.status, headers: res.headers, json };
}

/** A long streaming greedy completion on stories260K that the caller aborts with `signal`. */
export function longStoryStream(url: string, signal: AbortSignal): Promise<Response> {
  return fetch(`${url}/v1/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "stories260K",
      prompt: "Once upon a time",
      max_tokens: 400,
      temperature: 0,
      stream: true,
    }),
    signal,
  });
}

export const question = (a: number, b: number) => `What is ${a} times ${b}?`;

/** A hook program that makes the model write `text` (one character per token) and then go on. */
export function forceTextHook(text: string): string {
  return `
char *want = ${JSON.stringify(text)};
int ids[64];
int n;
int force(int step) {
  if (step < n) logit_set(ids[step], 1000000);
  return 0;
}
int main() {
  char buf[32];
  n = 0;
  while (want[n]) {
    int found = -1;
    for (int id = 0; id < tok_count() && found < 0; id++) {
      if (tok_str(id, buf) == 1 && buf[0] == want[n]) found = id;
    }
    ids[n] = found;
    n++;
  }
  hook_set("force", n);
  return 0;
}`;
}

/** A streamed greedy stories260K completion of 48 tokens with a usage chunk: the request body. */
export const greedyStoryStream = {
  model: "stories260K",
  prompt: "Once upon a time",
  max_tokens: 48,
  temperature: 0,
  stream: true,
  stream_options: { include_usage: true },
} as const;

/** A greedy, non-streaming stories260K completion of "Once upon a time". */
export function greedyStory(server: RunningServer, maxTokens: number) {
  return post(server, "/v1/completions", {
    model: "stories260K",
    prompt: "Once upon a time",
    max_tokens: maxTokens,
    temperature: 0,
  });
}

/** `ruffian serve ARGS` as a child process, resolved once it prints that it serves: its URL and
 * everything it printed up to then. */
export async function spawnServe(
  args: string[],
  options: { cwd?: string } = {},
): Promise<{ child: ChildProcess; url: string; stdout: string }> {
  const child = spawn(
    process.execPath,
    [join(packageRoot, "bin", "ruffian.js"), "serve", ...args],
    {
      cwd: options.cwd,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stdout = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => {
      stdout += d.toString();
      const m = /(http:\/\/127\.0\.0\.1:\d+) · model/.exec(stdout);
      if (m) resolve(m[1]!);
    });
    child.on("exit", (code) => reject(new Error(`serve exited with ${code} before serving`)));
  });
  return { child, url, stdout };
}
