// `ruffian run`: one generation with the VM in the loop, streamed to the terminal; the event
// stream can also be written as JSON lines for other tools.
import { readFileSync, createWriteStream } from "node:fs";
import { openEngine } from "../../engine/open.js";
import { DecodeLoop } from "../../decode/loop.js";
import { promptStyle, renderPrompt, stopStrings } from "../../decode/prompt.js";
import { defaultModelPath } from "../../paths.js";
import { StreamPrinter } from "../render.js";
import { paint } from "../style.js";
import { parseIntOption, parseNumberOption } from "../options.js";
import { vectorRequest } from "../../steer/vector-args.js";

export interface RunOptions {
  model?: string;
  prompt?: string;
  hook?: string;
  maxTokens?: string;
  temp?: string;
  topK?: string;
  topP?: string;
  seed?: string;
  events?: string;
  raw?: boolean;
  inject?: boolean;
  stats?: boolean;
  controlVector?: string[];
}

export async function runCommand(opts: RunOptions): Promise<number> {
  if (opts.prompt === undefined) throw new Error("--prompt is required");
  const maxTokens = parseIntOption("--max-tokens", opts.maxTokens ?? "128", 1);
  const temperature = parseNumberOption("--temp", opts.temp ?? "0", 0);
  const sampling = {
    temperature,
    topK: opts.topK ? parseIntOption("--top-k", opts.topK, 0) : 0,
    topP: opts.topP ? parseNumberOption("--top-p", opts.topP, 0) : 1,
    seed: opts.seed ? parseIntOption("--seed", opts.seed, 0) : 0,
  };
  const hook = opts.hook !== undefined ? readFileSync(opts.hook, "utf8") : undefined;
  const engine = await openEngine(opts.model ?? defaultModelPath, { download: false });
  try {
    const style = opts.raw ? "plain" : promptStyle(engine);
    const prompt =
      style === "plain"
        ? opts.prompt
        : renderPrompt(engine, [{ role: "user", content: opts.prompt }]);
    const events = opts.events ? createWriteStream(opts.events) : undefined;
    const printer = new StreamPrinter({ out: process.stdout, console: process.stderr });
    const vectors = vectorRequest(opts.controlVector, engine);
    const loop = new DecodeLoop(engine);
    if (style === "plain") process.stdout.write(paint.bold(opts.prompt));
    for await (const ev of loop.run([
      {
        prompt,
        maxTokens,
        sampling,
        hook,
        stop: stopStrings(style),
        inject: opts.inject !== false,
        ...vectors,
      },
    ])) {
      printer.handle(ev);
      events?.write(
        JSON.stringify(ev, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v)) + "\n",
      );
    }
    process.stdout.write("\n");
    if (events) await new Promise<void>((r) => events.end(() => r()));
    const done = printer.done[0];
    if (done && opts.stats) {
      const s = done.stats;
      process.stderr.write(
        paint.dim(
          `${done.reason} · ${s.sampledTokens} tokens · ${s.tokensPerSecond.toFixed(1)} tok/s · ` +
            `${s.vmCalls} VM calls · ${s.injectedTokens} injected tokens · ${s.rewinds} rewinds\n`,
        ),
      );
    }
    return 0;
  } finally {
    engine.dispose();
  }
}
