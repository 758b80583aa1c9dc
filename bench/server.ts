// Throughput and latency of `ruffian serve` under 1, 4 and 16 concurrent streaming clients on both
// shipped models, against peers measured in the same run: the engine's raw batched decode at the
// same batch size (greedy argmax, one llama_decode per step, no HTTP, no VM), and llama-server when
// one is found ($LLAMA_SERVER or `llama-server` on PATH; otherwise its columns are skipped).
// A second table says where the time went: how long the decode thread waited for a core, the
// bench clients' own CPU per token for each server, and llama-server's step by its own `timings`.
// Then: disconnect-to-slot-freed time, and a load run of 200 requests from 32 clients, a third of
// them with failing or looping regions.
//   npm run build && node dist/bench/server.js [max-tokens] [rounds]
//   node dist/bench/server.js load [runs]   (only the load run, repeated: a stress reproducer)
//   node dist/bench/server.js ab OTHER-CHECKOUT [clients] [max-tokens] [rounds] [stories260K|nano]
//     (A/B: this checkout's server against another built checkout's, same requests, interleaved;
//     OTHER-CHECKOUT `main-thread` is this checkout with `--decode-thread main`, `threads=N` this
//     checkout with N llama.cpp threads, `no-overlap` this checkout with RUFFIAN_OVERLAP=0)
import { spawn, spawnSync } from "node:child_process";
import { Agent, request as httpRequest, type IncomingMessage } from "node:http";
import { readFileSync, readdirSync } from "node:fs";
import { openEngine } from "../src/engine/open.js";
import { defaultThreadCount } from "../src/engine/threads.js";
import { join } from "node:path";
import { nanoModelPath, packageRoot, storiesModelPath } from "../src/paths.js";
import { startServer, modelIdOf, type RunningServer } from "../src/server/server.js";
import { forceTextHook, longStoryStream } from "../test/server/helpers.js";

const mode = process.argv[2] === "load" || process.argv[2] === "ab" ? process.argv[2] : "table";
const loadOnly = mode === "load";
const abOther = mode === "ab" ? process.argv[3] : undefined;
const abClients = Number(process.argv[4] ?? 16);
/** The A/B's model: stories260K (default) or nano (chat requests with a region each). */
const abModel = process.argv[7] ?? "stories260K";
if (mode === "ab" && abModel !== "stories260K" && abModel !== "nano")
  throw new Error(`unknown A/B model '${abModel}' (use stories260K or nano)`);
/** Requests each A/B client sends one after another per round: at least 16 per round, so that
 * a round at one client is not one request's noise. */
const abPerClient = Math.ceil(16 / abClients);
const maxTokens = loadOnly
  ? 96
  : Number(process.argv[mode === "ab" ? 5 : 2] ?? (abOther ? 64 : 96));
const rounds = Number(process.argv[mode === "ab" ? 6 : 3] ?? (loadOnly ? 10 : abOther ? 9 : 5));
const threads = defaultThreadCount();
/** Extra `ruffian serve` options for this checkout's server: RUFFIAN_SERVE_ARGS, split on spaces
 * (e.g. "--decode-thread main"). */
const serveArgs = (process.env.RUFFIAN_SERVE_ARGS ?? "").split(" ").filter((a) => a !== "");

interface Load {
  model: string;
  /** The body of request i (without stream flags). */
  body(i: number): Record<string, unknown>;
  endpoint: "/v1/completions" | "/v1/chat/completions";
  /** The prompt of request i as the raw peer decodes it. */
  prompt(i: number): string;
}

const stories: Load = {
  model: storiesModelPath,
  endpoint: "/v1/completions",
  prompt: () => "Once upon a time",
  body: () => ({ prompt: "Once upon a time", max_tokens: maxTokens, temperature: 0 }),
};
const nano: Load = {
  model: nanoModelPath,
  endpoint: "/v1/chat/completions",
  prompt: (i) => `Q: What is ${1000 + 37 * i} times ${17 + 3 * i}?\nA:`,
  body: (i) => ({
    messages: [{ role: "user", content: `What is ${1000 + 37 * i} times ${17 + 3 * i}?` }],
    max_tokens: maxTokens,
    temperature: 0,
  }),
};

const pct = (xs: number[], p: number) =>
  xs.length === 0
    ? NaN
    : [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
const median = (xs: number[]) => pct(xs, 0.5);

interface ClientRun {
  /** Text tokens generated, as OpenAI counts them (the end-of-text token is not one). */
  tokens: number;
  /** The last finish_reason the stream sent (undefined if it sent none). */
  finishReason: string | undefined;
  ttftMs: number;
  gapsMs: number[];
  text: string;
  /** llama-server's own per-token generation time for this request (its `timings` field), ms. */
  peerTokenMs?: number;
}

/** The clients' connections, kept open between requests as an OpenAI client's are. */
const keepAlive = new Agent({ keepAlive: true, maxSockets: Infinity });

/** A POST whose response body arrives as a stream of text, handed to `onText` as it comes;
 * rejects on a non-2xx status. Plain node:http with a data listener: fetch's own work per
 * request (about 1.5 ms here, in this process), or an async iterator's per chunk, is the
 * client's cost, not the server's, and on this machine's two cores it competes with the
 * servers for CPU: a server that sends a chunk per token (llama-server) makes the client work
 * most. */
async function postStream(
  url: string,
  path: string,
  body: string,
  onText: (text: string) => void,
): Promise<void> {
  const target = new URL(url + path);
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: "POST",
        agent: keepAlive,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      resolve,
    );
    req.on("error", reject);
    req.end(body);
  });
  res.setEncoding("utf8");
  const failed = res.statusCode === undefined || res.statusCode >= 300;
  let errorText = "";
  await new Promise<void>((resolve, reject) => {
    res.on("data", (part: string) => (failed ? (errorText += part) : onText(part)));
    res.on("end", resolve);
    res.on("error", reject);
  });
  if (failed) throw new Error(`${path}: HTTP ${res.statusCode} ${errorText}`);
}

/** One streaming request; tokens counted from usage, latencies from content chunks. */
async function streamOnce(url: string, path: string, body: object): Promise<ClientRun> {
  const start = performance.now();
  let buffer = "";
  let last = 0;
  let ttft = NaN;
  let tokens = 0;
  let text = "";
  let finishReason: string | undefined;
  let peerTokenMs: number | undefined;
  const gaps: number[] = [];
  const onText = (part: string) => {
    buffer += part;
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const line = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      if (!line.startsWith("data: ") || line === "data: [DONE]") continue;
      const chunk = JSON.parse(line.slice(6));
      if (chunk.usage) tokens = chunk.usage.completion_tokens;
      if (chunk.timings) peerTokenMs = chunk.timings.predicted_per_token_ms;
      // A stream that fails ends with an error chunk: keep its message for the load run's report.
      if (chunk.error) text += ` [stream error: ${chunk.error.message}]`;
      const c = chunk.choices?.[0];
      if (c?.finish_reason) finishReason = c.finish_reason;
      const piece = c?.delta?.content ?? c?.text ?? "";
      if (piece) {
        const now = performance.now();
        if (Number.isNaN(ttft)) ttft = now - start;
        else gaps.push(now - last);
        last = now;
        text += piece;
      }
    }
  };
  await postStream(
    url,
    path,
    JSON.stringify({ ...body, stream: true, stream_options: { include_usage: true } }),
    onText,
  );
  return { tokens, finishReason, ttftMs: ttft, gapsMs: gaps, text, peerTokenMs };
}

/** `ruffian serve` in its own process, as a user runs it (the client's work is not its cost). */
async function spawnServer(
  model: string,
  slots: number,
  root = packageRoot,
  extraArgs: readonly string[] = [],
  serverThreads = threads,
  env: Record<string, string> = {},
): Promise<{ url: string; pid: number; stop(): void }> {
  const bin = join(root, "bin", "ruffian.js");
  const child = spawn(
    process.execPath,
    [bin, "serve", "--model", model, "--port", "0", "--slots", String(slots), ...extraArgs],
    {
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, RUFFIAN_THREADS: String(serverThreads), ...env },
    },
  );
  let out = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /(http:\/\/[\d.:]+) · model/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on("exit", (code) => reject(new Error(`ruffian serve exited with ${code}`)));
  });
  return { url, pid: child.pid!, stop: () => child.kill("SIGTERM") };
}

/** One thread's time from the scheduler's own count (getrusage is tick-scaled over short
 * spans): seconds on a CPU, and seconds runnable but waiting for one (another thread or process
 * had the core); NaN where /proc cannot tell. */
interface ThreadTime {
  cpu: number;
  wait: number;
}

function threadTime(pid: number, tid: number): ThreadTime {
  try {
    const [cpu, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ");
    return { cpu: Number(cpu) / 1e9, wait: Number(wait) / 1e9 };
  } catch {
    return { cpu: NaN, wait: NaN };
  }
}

function threadSeconds(pid: number, tid: number): number {
  return threadTime(pid, tid).cpu;
}

/** CPU seconds of a process's main thread: in the raw peer the thread that runs llama_decode and
 * all of the JavaScript; in ruffian serve the HTTP thread (and, with `--decode-thread main`, the
 * decode loop too). */
function mainThreadSeconds(pid: number | undefined): number {
  return pid === undefined ? NaN : threadSeconds(pid, pid);
}

/** The time of each thread of a process, by thread id. */
function threadTable(pid: number | undefined): Map<number, ThreadTime> {
  const table = new Map<number, ThreadTime>();
  if (pid === undefined) return table;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`))
      table.set(Number(tid), threadTime(pid, Number(tid)));
  } catch {
    // The process is gone: no threads to read.
  }
  return table;
}

/** The thread that spent the most CPU between two tables: the decode thread (llama_decode and
 * the loop's JavaScript), wherever it runs, with its CPU and run-queue seconds; NaN when /proc
 * cannot tell. */
function busiestThread(
  before: Map<number, ThreadTime>,
  after: Map<number, ThreadTime>,
): ThreadTime {
  let most: ThreadTime = { cpu: NaN, wait: NaN };
  for (const [tid, now] of after) {
    const was = before.get(tid) ?? { cpu: 0, wait: 0 };
    const spent = { cpu: (now.cpu || 0) - (was.cpu || 0), wait: (now.wait || 0) - (was.wait || 0) };
    if (!(spent.cpu <= most.cpu)) most = spent;
  }
  return most;
}

/** Every thread but the HTTP (main) thread, summed: with the decode loop's overlap the steps'
 * llama_decode runs on libuv pool threads (four, in turn) and the decode worker's thread keeps
 * the loop's JavaScript, so no single thread is "the decode thread" any more. */
function decodeSide(
  before: Map<number, ThreadTime>,
  after: Map<number, ThreadTime>,
  pid: number | undefined,
): ThreadTime {
  const sum = { cpu: 0, wait: 0 };
  for (const [tid, now] of after) {
    if (tid === pid) continue;
    const was = before.get(tid) ?? { cpu: 0, wait: 0 };
    sum.cpu += (now.cpu || 0) - (was.cpu || 0);
    sum.wait += (now.wait || 0) - (was.wait || 0);
  }
  return pid === undefined ? { cpu: NaN, wait: NaN } : sum;
}

/** CPU seconds of this process (the bench's clients, while a server is measured). */
function clientSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

/** CPU seconds of every thread of a process (llama-server's HTTP and slot threads included). */
function processSeconds(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    return readdirSync(`/proc/${pid}/task`).reduce(
      (sum, tid) => sum + (threadSeconds(pid, Number(tid)) || 0),
      0,
    );
  } catch {
    return NaN;
  }
}

/** `clients` concurrent streams, each sending `perClient` requests one after another. */
async function serverRun(
  server: { url: string; pid?: number },
  load: Load,
  clients: number,
  perClient = 1,
) {
  const url = server.url;
  const modelId = modelIdOf(load.model);
  const cpuBefore = processSeconds(server.pid);
  const mainBefore = mainThreadSeconds(server.pid);
  const threadsBefore = threadTable(server.pid);
  const clientBefore = clientSeconds();
  const start = performance.now();
  const runs = (
    await Promise.all(
      Array.from({ length: clients }, async (_, i) => {
        const mine: ClientRun[] = [];
        for (let k = 0; k < perClient; k++)
          mine.push(
            await streamOnce(url, load.endpoint, { model: modelId, ...load.body(i + k * clients) }),
          );
        return mine;
      }),
    )
  ).flat();
  const seconds = (performance.now() - start) / 1000;
  const tokens = runs.reduce((n, r) => n + r.tokens, 0);
  const cpu = processSeconds(server.pid) - cpuBefore;
  const main = mainThreadSeconds(server.pid) - mainBefore;
  const threadsAfter = threadTable(server.pid);
  const decode = busiestThread(threadsBefore, threadsAfter);
  const side = decodeSide(threadsBefore, threadsAfter, server.pid);
  return {
    tokensPerSecond: tokens / seconds,
    cpuMicrosPerToken: (cpu * 1e6) / tokens,
    mainMicrosPerToken: (main * 1e6) / tokens,
    decodeMicrosPerToken: (decode.cpu * 1e6) / tokens,
    /** How long the decode thread was runnable but off a core: the HTTP thread, the clients or
     * another process had it. */
    decodeWaitMicrosPerToken: (decode.wait * 1e6) / tokens,
    /** Every thread but the HTTP thread: the decode, the loop, GC helpers, VM workers. */
    sideMicrosPerToken: (side.cpu * 1e6) / tokens,
    sideWaitMicrosPerToken: (side.wait * 1e6) / tokens,
    clientMicrosPerToken: ((clientSeconds() - clientBefore) * 1e6) / tokens,
    ttft: runs.map((r) => r.ttftMs),
    gaps: runs.flatMap((r) => r.gapsMs),
  };
}

/** The engine alone: prompts prefilled together, then one batched greedy decode per step. */
async function rawRun(
  load: Load,
  clients: number,
  kvUnified: boolean,
): Promise<{
  tokensPerSecond: number;
  cpuMicrosPerToken: number;
  waitMicrosPerToken: number;
  stepMicros: number;
}> {
  const engine = await openEngine(load.model, {
    sequences: clients,
    contextSize: 512 * clients,
    threads,
    glassBox: kvUnified,
    kvUnified,
    flashAttention: !kvUnified,
  });
  try {
    const start = performance.now();
    const timeStart = threadTime(process.pid, process.pid);
    const prompts = Array.from({ length: clients }, (_, i) =>
      engine.tokenize(load.prompt(i), { addSpecial: true, parseSpecial: true }),
    );
    engine.decode(prompts.map((tokens, seq) => ({ seq, tokens })));
    const active = new Set(prompts.map((_, seq) => seq));
    // Text tokens, counted as the servers' usage counts them: the end-of-text token is none.
    let sampled = 0;
    // llama-server's timings.predicted_per_token_ms measured the same way: from a sequence's
    // first sampled token to its last (the end-of-text token included), over those tokens; the
    // prompt's prefill is not in it.
    const generationStart = performance.now();
    const perToken: number[] = [];
    const counts = new Array<number>(clients).fill(0);
    const finish = (seq: number) => {
      active.delete(seq);
      perToken.push((performance.now() - generationStart) / counts[seq]!);
    };
    for (let step = 0; step < maxTokens && active.size > 0; step++) {
      const items: Array<{ seq: number; tokens: number[] }> = [];
      for (const seq of active) {
        const logits = engine.logits(seq);
        let best = 0;
        for (let t = 1; t < logits.length; t++) if (logits[t]! > logits[best]!) best = t;
        counts[seq]!++;
        if (engine.isEndOfGeneration(best)) finish(seq);
        else {
          sampled++;
          items.push({ seq, tokens: [best] });
        }
      }
      if (items.length > 0) engine.decode(items);
    }
    for (const seq of [...active]) finish(seq);
    const time = threadTime(process.pid, process.pid);
    return {
      tokensPerSecond: sampled / ((performance.now() - start) / 1000),
      cpuMicrosPerToken: ((time.cpu - timeStart.cpu) * 1e6) / sampled,
      waitMicrosPerToken: ((time.wait - timeStart.wait) * 1e6) / sampled,
      stepMicros: median(perToken) * 1000,
    };
  } finally {
    engine.dispose();
  }
}

/** llama-server from $LLAMA_SERVER (or the older $RUFFIAN_LLAMA_SERVER), else from PATH. The
 * bench never builds one. */
function findLlamaServer(): string | undefined {
  const env = process.env.LLAMA_SERVER ?? process.env.RUFFIAN_LLAMA_SERVER;
  if (env) return env;
  const r = spawnSync("sh", ["-c", "command -v llama-server"], { encoding: "utf8" });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

/** llama-server on the same model, slots, per-slot context and threads, in its own process. */
async function spawnLlamaServer(
  bin: string,
  model: string,
  clients: number,
): Promise<{ url: string; pid: number; stop(): void }> {
  const port = 20000 + Math.floor(Math.random() * 20000);
  const child = spawn(
    bin,
    [
      ...["-m", model, "--port", String(port), "-np", String(clients)],
      ...["-c", String(512 * clients), "-t", String(threads), "--log-disable"],
    ],
    { stdio: "ignore" },
  );
  let exited: number | null | undefined;
  child.on("exit", (code) => (exited = code));
  const url = `http://127.0.0.1:${port}`;
  // It answers 503 while loading, like ours.
  for (let waited = 0; ; waited += 100) {
    const ok = await fetch(`${url}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (exited !== undefined || waited > 60_000) {
      child.kill("SIGTERM");
      throw new Error(`llama-server (${bin}) did not become ready (exit ${exited})`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url, pid: child.pid!, stop: () => child.kill("SIGTERM") };
}

/** The same requests to llama-server as plain completions of the prompt our server renders (it
 * has no Ruffian format for nano's Q:/A:), greedy, the same max_tokens. */
async function llamaServerRun(peer: { url: string; pid: number }, load: Load, clients: number) {
  const url = peer.url;
  const cpuBefore = processSeconds(peer.pid);
  const clientBefore = clientSeconds();
  const start = performance.now();
  const runs = await Promise.all(
    Array.from({ length: clients }, (_, i) =>
      streamOnce(url, "/v1/completions", {
        model: modelIdOf(load.model),
        prompt: load.prompt(i),
        max_tokens: maxTokens,
        temperature: 0,
      }),
    ),
  );
  const seconds = (performance.now() - start) / 1000;
  // llama-server's completion_tokens also counts the end-of-text token (measured: 44 for a
  // 43-token text); ours and OpenAI's do not. The bench sends no stop strings, so "stop" here is
  // always that token.
  const tokens = runs.reduce((n, r) => n + r.tokens - (r.finishReason === "stop" ? 1 : 0), 0);
  return {
    tokensPerSecond: tokens / seconds,
    cpuMicrosPerToken: ((processSeconds(peer.pid) - cpuBefore) * 1e6) / tokens,
    clientMicrosPerToken: ((clientSeconds() - clientBefore) * 1e6) / tokens,
    /** Its own generation time per token (`timings.predicted_per_token_ms`), median over the
     * requests, µs: the step of its decode loop, without the HTTP round trips. */
    stepMicros: median(runs.map((r) => (r.peerTokenMs ?? NaN) * 1000)),
  };
}

/** Warm-up rounds before the measured ones: at least 24 requests whatever the clients. */
const warmUpRounds = (clients: number) => Math.max(2, Math.ceil(24 / clients));

const fmt = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : "—");

async function throughputTable(): Promise<void> {
  const llamaServer = findLlamaServer();
  console.log(
    `threads ${threads}, max_tokens ${maxTokens}, ${rounds} rounds, load ${loadAverage()}, llama-server ${llamaServer ?? "not found"}`,
  );
  console.log(
    "| model | clients | server tok/s | raw tok/s | server/raw | server decode-thread µs/tok | server HTTP-thread µs/tok | raw main-thread µs/tok | raw/server decode-thread | server all-threads µs/tok | TTFT p50 / p95 ms | ITL p50 / p95 ms | llama-server tok/s | llama-server all-threads µs/tok | server/llama-server |",
  );
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  /** The second table's rows: where each peer's time went (printed after the first). */
  const where: string[] = [];
  for (const load of [stories, nano]) {
    for (const clients of [1, 4, 16]) {
      const server = await spawnServer(load.model, clients, packageRoot, serveArgs);
      const peerServer = llamaServer
        ? await spawnLlamaServer(llamaServer, load.model, clients)
        : undefined;
      const ours: Array<Awaited<ReturnType<typeof serverRun>>> = [];
      const raws: Array<Awaited<ReturnType<typeof rawRun>>> = [];
      const peers: Array<Awaited<ReturnType<typeof llamaServerRun>>> = [];
      try {
        // Warm-up: compile caches, first allocations, and JIT of the per-request path (one
        // request of 64 tokens measured 45 ms at first, 16 ms from about the 20th).
        for (let w = 0; w < warmUpRounds(clients); w++) {
          await serverRun(server, load, clients);
          if (peerServer) await llamaServerRun(peerServer, load, clients);
        }
        // Interleaved rounds, each starting with a different peer: the machine is shared and
        // its load drifts, so every peer gets the same chances; medians, not the best round.
        const steps: Array<() => Promise<unknown>> = [
          async () => ours.push(await serverRun(server, load, clients)),
          async () => raws.push(await rawRun(load, clients, false)),
          ...(peerServer
            ? [async () => peers.push(await llamaServerRun(peerServer, load, clients))]
            : []),
        ];
        for (let r = 0; r < rounds; r++)
          for (let k = 0; k < steps.length; k++) await steps[(r + k) % steps.length]!();
      } finally {
        server.stop();
        peerServer?.stop();
      }
      const med = <T>(xs: T[], f: (x: T) => number) => median(xs.map(f));
      const tps = med(ours, (x) => x.tokensPerSecond);
      const main = med(ours, (x) => x.mainMicrosPerToken);
      const decode = med(ours, (x) => x.decodeMicrosPerToken);
      const rawTps = med(raws, (x) => x.tokensPerSecond);
      const rawCpu = med(raws, (x) => x.cpuMicrosPerToken);
      const peerTps = peers.length ? med(peers, (x) => x.tokensPerSecond) : NaN;
      const ttft = ours.flatMap((x) => x.ttft);
      const gaps = ours.flatMap((x) => x.gaps);
      console.log(
        `| ${modelIdOf(load.model)} | ${clients} | ${fmt(tps, 0)} | ${fmt(rawTps, 0)} | ${fmt(tps / rawTps, 2)} | ` +
          `${fmt(decode, 0)} | ${fmt(main, 0)} | ${fmt(rawCpu, 0)} | ${fmt(rawCpu / decode, 2)} | ${fmt(
            med(ours, (x) => x.cpuMicrosPerToken),
            0,
          )} | ` +
          `${fmt(pct(ttft, 0.5))} / ${fmt(pct(ttft, 0.95))} | ${fmt(pct(gaps, 0.5), 2)} / ${fmt(pct(gaps, 0.95), 2)} | ` +
          `${fmt(peerTps, 0)} | ${
            peers.length
              ? fmt(
                  med(peers, (x) => x.cpuMicrosPerToken),
                  0,
                )
              : "—"
          } | ${fmt(tps / peerTps, 2)} |`,
      );
      const peerStep = peers.length ? med(peers, (x) => x.stepMicros) : NaN;
      const rawStep = med(raws, (x) => x.stepMicros);
      where.push(
        `| ${modelIdOf(load.model)} | ${clients} | ${fmt(
          med(ours, (x) => x.decodeWaitMicrosPerToken),
          0,
        )} | ` +
          `${fmt(
            med(raws, (x) => x.waitMicrosPerToken),
            0,
          )} | ${fmt(
            med(ours, (x) => x.clientMicrosPerToken),
            0,
          )} | ` +
          `${
            peers.length
              ? fmt(
                  med(peers, (x) => x.clientMicrosPerToken),
                  0,
                )
              : "—"
          } | ` +
          `${fmt(peerStep / 1000, 3)} | ${fmt((clients * 1e6) / peerStep, 0)} | ${fmt((rawTps * peerStep) / (clients * 1e6), 2)} | ` +
          `${fmt(rawStep / 1000, 3)} | ${fmt(peerStep / rawStep, 2)} | ` +
          `${fmt(
            med(ours, (x) => x.sideMicrosPerToken),
            0,
          )} | ${fmt(
            med(ours, (x) => x.sideWaitMicrosPerToken),
            0,
          )} |`,
      );
    }
  }
  console.log(
    "\n| model | clients | server decode-thread run-queue wait µs/tok | raw run-queue wait µs/tok | bench client CPU µs/tok, server | bench client CPU µs/tok, llama-server | llama-server step ms (its timings) | llama-server tok/s by its timings | raw / that | raw step ms (the same measure) | llama-server step / raw step | server decode side (all but HTTP) µs/tok | its run-queue wait µs/tok |",
  );
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  console.log(where.join("\n"));
  if (!llamaServer)
    console.log(
      "llama-server: not found (set LLAMA_SERVER or put llama-server on PATH); its columns are skipped",
    );
}

/** This checkout's server against another built checkout's (`npm run build` there) on the same
 * requests (stories260K, or nano's chat with a region each), in interleaved rounds; CPU per
 * token by thread, medians and the median of the per-round ratios. */
async function abRun(other: string): Promise<void> {
  console.log(
    `A = ${other}, B = ${packageRoot}; ${abModel}, ${abClients} clients × ${abPerClient} requests × ${maxTokens} tokens, ${rounds} rounds, load ${loadAverage()}`,
  );
  const load = abModel === "nano" ? nano : stories;
  const otherThreads = /^threads=(\d+)$/.exec(other)?.[1];
  const a =
    other === "main-thread"
      ? await spawnServer(load.model, abClients, packageRoot, ["--decode-thread", "main"])
      : otherThreads
        ? await spawnServer(load.model, abClients, packageRoot, serveArgs, Number(otherThreads))
        : other === "no-overlap"
          ? await spawnServer(load.model, abClients, packageRoot, serveArgs, threads, {
              RUFFIAN_OVERLAP: "0",
            })
          : await spawnServer(load.model, abClients, other);
  const b = await spawnServer(load.model, abClients, packageRoot, serveArgs);
  const runsA: Array<Awaited<ReturnType<typeof serverRun>>> = [];
  const runsB: typeof runsA = [];
  try {
    for (let w = 0; w < warmUpRounds(abClients); w++)
      for (const s of [a, b]) await serverRun(s, load, abClients, abPerClient);
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? [a, b] : [b, a];
      for (const s of order)
        (s === a ? runsA : runsB).push(await serverRun(s, load, abClients, abPerClient));
    }
  } finally {
    a.stop();
    b.stop();
  }
  for (const [name, runs] of [
    ["A", runsA],
    ["B", runsB],
  ] as const)
    console.log(
      `${name}: decode-thread µs/tok median ${fmt(median(runs.map((x) => x.decodeMicrosPerToken)), 0)} ` +
        `[${runs.map((x) => fmt(x.decodeMicrosPerToken, 0)).join(" ")}], its run-queue wait ${fmt(median(runs.map((x) => x.decodeWaitMicrosPerToken)), 0)}, ` +
        `all but HTTP ${fmt(median(runs.map((x) => x.sideMicrosPerToken)), 0)} (wait ${fmt(median(runs.map((x) => x.sideWaitMicrosPerToken)), 0)}), main thread ${fmt(median(runs.map((x) => x.mainMicrosPerToken)), 0)}, ` +
        `all threads ${fmt(median(runs.map((x) => x.cpuMicrosPerToken)), 0)}, ` +
        `tok/s median ${fmt(median(runs.map((x) => x.tokensPerSecond)), 0)} [${runs.map((x) => fmt(x.tokensPerSecond, 0)).join(" ")}], ` +
        `TTFT p50 ${fmt(median(runs.flatMap((x) => x.ttft)), 2)} ms`,
    );
  const ratios = runsB.map((x, i) => x.decodeMicrosPerToken / runsA[i]!.decodeMicrosPerToken);
  const speed = runsB.map((x, i) => x.tokensPerSecond / runsA[i]!.tokensPerSecond);
  const ttft = runsB.map((x, i) => median(x.ttft) / median(runsA[i]!.ttft));
  console.log(
    `B/A decode-thread µs/tok: median of per-round ratios ${fmt(median(ratios), 3)} [${ratios.map((x) => fmt(x, 2)).join(" ")}]; ` +
      `B/A tok/s ${fmt(median(speed), 3)} [${speed.map((x) => fmt(x, 2)).join(" ")}]; ` +
      `B/A TTFT p50 ${fmt(median(ttft), 3)} [${ttft.map((x) => fmt(x, 2)).join(" ")}]; load ${loadAverage()}`,
  );
}

function loadAverage(): string {
  return spawnSync("uptime", { encoding: "utf8" })
    .stdout.trim()
    .replace(/.*load average: /, "");
}

async function metric(server: RunningServer, series: string): Promise<number> {
  return metricAt(server.url, series);
}

async function metricAt(url: string, series: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(series + " "));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

/** Client disconnect → slot freed, against the time of one decode step at the same batch. */
async function cancelLatency(): Promise<void> {
  const server = await startServer({
    model: storiesModelPath,
    port: 0,
    slots: 4,
    ctx: 512,
    threads,
  });
  try {
    const rounds = 10;
    for (let r = 0; r < rounds; r++) {
      const controller = new AbortController();
      const res = await longStoryStream(server.url, controller.signal);
      const reader = res.body!.getReader();
      await reader.read();
      await reader.read();
      controller.abort();
      while (server.context.host.busy > 0) await new Promise((r) => setImmediate(r));
    }
    const seconds = await metric(server, "ruffian_cancel_seconds_sum");
    const count = await metric(server, "ruffian_cancel_seconds_count");
    const steps = await metric(server, "ruffian_cancel_steps_sum");
    const single = await serverRun(server, stories, 1);
    console.log(
      `\ndisconnect → slot freed: mean ${fmt((seconds / count) * 1000, 2)} ms over ${count} disconnects ` +
        `(${steps} tokens sampled after a cancel in total); one decode step at 1 client: ` +
        `${fmt(1000 / single.tokensPerSecond, 2)} ms`,
    );
  } finally {
    await server.close();
  }
}

/** 200 requests from 32 clients, every third one forced to write a failing or looping region.
 * Returns how many requests went wrong (a wrong answer, a missing in-band error, an error, or an
 * ordinary answer cut short: those end by themselves well within max_tokens). */
async function loadRun(): Promise<number> {
  const server = await startServer({
    model: nanoModelPath,
    port: 0,
    slots: 16,
    threads,
    queueLimit: 64,
  });
  const rssBefore = process.memoryUsage().rss;
  let next = 0;
  let correct = 0;
  let wrong = 0;
  let failedAsExpected = 0;
  let errors = 0;
  let cut = 0;
  /** The first few requests that went wrong, to print: a count alone cannot be diagnosed. */
  const samples: string[] = [];
  const sample = (i: number, what: string) => {
    if (samples.length < 5) samples.push(`  request ${i}: ${what.slice(0, 240)}`);
  };
  const started = performance.now();
  const client = async () => {
    for (let i = next++; i < 200; i = next++) {
      const bad = i % 3 === 0;
      const a = 100 + i;
      const b = 7 + (i % 50);
      const body = {
        model: "ruffian-nano",
        messages: [{ role: "user", content: `What is ${a} times ${b}?` }],
        temperature: 0,
        max_tokens: 60,
        ...(bad
          ? { ruffian: { hook: forceTextHook(i % 2 ? " [C: 1/0]" : " [C: for(;;);]") } }
          : {}),
      };
      try {
        const run = await streamOnce(server.url, "/v1/chat/completions", body);
        if (bad && /VM\[error: /.test(run.text)) failedAsExpected++;
        else if (bad) {
          errors++;
          sample(i, `no in-band error: ${JSON.stringify(run.text)}`);
        } else if (run.finishReason !== "stop") {
          cut++;
          sample(i, `ended with finish_reason ${run.finishReason}: ${JSON.stringify(run.text)}`);
        } else if (run.text.includes(`VM[${a * b}]`)) correct++;
        else {
          wrong++;
          sample(i, `wanted VM[${a * b}]: ${JSON.stringify(run.text)}`);
        }
      } catch (err) {
        errors++;
        sample(i, (err as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: 32 }, client));
  const seconds = (performance.now() - started) / 1000;
  const rssAfter = process.memoryUsage().rss;
  await server.close();
  console.log(
    `\nload: 200 requests, 32 clients, 16 slots in ${fmt(seconds, 1)} s: ${correct} correct, ${wrong} wrong, ` +
      `${failedAsExpected} failing/looping regions reported in-band, ${errors} errors, ${cut} cut short; ` +
      `RSS ${fmt(rssBefore / 2 ** 20, 0)} MiB before, ${fmt(rssAfter / 2 ** 20, 0)} MiB after`,
  );
  if (samples.length > 0) console.log(samples.join("\n"));
  return wrong + errors + cut;
}

if (abOther) {
  await abRun(abOther);
} else if (loadOnly) {
  console.log(`load runs: ${rounds}, threads ${threads}, load ${loadAverage()}`);
  let failing = 0;
  for (let r = 0; r < rounds; r++) if ((await loadRun()) > 0) failing++;
  console.log(`\n${failing} of ${rounds} load runs had a request go wrong; load ${loadAverage()}`);
} else {
  await throughputTable();
  await cancelLatency();
  await loadRun();
}
