// `ruffian run`: one generation with the VM in the loop, streamed to the terminal; the event
// stream can also be written as JSON lines for other tools. Built on the public API (src/index.ts).
import { closeSync, writeSync } from "node:fs";
import { openOutputFile, readChatTemplateFile, readOptionFile } from "../files.js";
import { loadModel, type Model } from "../../api/model.js";
import { HookError } from "../../api/hook-error.js";
import { defaultModelPath } from "../../paths.js";
import { StreamPrinter } from "../render.js";
import { paint } from "../style.js";
import { ReportedFailure, UsageError } from "../errors.js";
import type { ModelOptionValues } from "../options.js";
import { vectorRequest } from "../../steer/vector-args.js";
import { toJson } from "../../json.js";

export interface RunOptions extends ModelOptionValues {
  prompt: string;
  hook?: string;
  maxTokens: number;
  temp: number;
  topK?: number;
  topP?: number;
  seed?: number;
  events?: string;
  raw?: boolean;
  /** --chat-template: a Jinja file used instead of the model's tokenizer.chat_template. */
  chatTemplate?: string;
  inject?: boolean;
  stats?: boolean;
  controlVector?: string[];
}

export async function runCommand(opts: RunOptions): Promise<number> {
  const chatTemplate =
    opts.chatTemplate !== undefined ? readChatTemplateFile(opts.chatTemplate) : undefined;
  const hook = opts.hook !== undefined ? readOptionFile("--hook", opts.hook) : undefined;
  const eventsFd = opts.events !== undefined ? openOutputFile("--events", opts.events) : undefined;
  let model: Model | undefined;
  try {
    model = await loadModel(opts.model ?? defaultModelPath, {
      device: opts.device,
      threads: opts.threads,
      chatTemplate,
    });
    const vectors = vectorRequest(opts.controlVector, model.engine);
    const plain = opts.raw === true || model.promptStyle === "plain";
    let events;
    try {
      events = model.generate({
        prompt: opts.prompt,
        format: opts.raw ? "plain" : "auto",
        maxTokens: opts.maxTokens,
        sampling: {
          temperature: opts.temp,
          topK: opts.topK ?? 0,
          topP: opts.topP ?? 1,
          seed: opts.seed ?? 0,
        },
        hook,
        hookName: opts.hook,
        inject: opts.inject !== false,
        ...vectors,
      });
    } catch (err) {
      if (err instanceof HookError) throw new ReportedFailure(err.message);
      throw err;
    }
    const printer = new StreamPrinter({ out: process.stdout, console: process.stderr });
    let started = false;
    try {
      for await (const ev of events) {
        if (!started && plain) process.stdout.write(paint.bold(opts.prompt));
        started = true;
        printer.handle(ev);
        if (eventsFd !== undefined) writeSync(eventsFd, toJson(ev) + "\n");
      }
    } catch (err) {
      if (err instanceof HookError) throw new ReportedFailure(err.message);
      throw err;
    }
    process.stdout.write("\n");
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
    if (done?.reason === "context-full") {
      process.stderr.write(
        `ruffian: the context (${model.engine.capabilities.contextSize} tokens) filled up before the generation ended\n`,
      );
      return 1;
    }
    return 0;
  } finally {
    if (eventsFd !== undefined) closeSync(eventsFd);
    model?.dispose();
  }
}
