// `ruffian chat`: a multi-turn conversation in the terminal with the VM in the loop — streamed
// answers, VM results, hook console, rewinds and slash commands — or a plain line-by-line mode
// for pipes and scripts.
import { readFileSync } from "node:fs";
import { nanoModelPath } from "../../paths.js";
import type { ModelOptionValues } from "../options.js";
import { HookError } from "../../api/hook-error.js";
import { ReportedFailure } from "../errors.js";
import { readChatTemplateFile } from "../files.js";
import { ChatSession, type ChatSettings } from "../chat/session.js";
import { PlainView, TtyView, type ChatView } from "../chat/view.js";
import { pipeLoop, ttyLoop } from "../chat/repl.js";
import { openModelWithProgress } from "../chat/loading.js";
import { modelCacheDir } from "./models.js";
import { basename } from "node:path";
import { vectorRequest } from "../../steer/vector-args.js";

export interface ChatOptions extends ModelOptionValues {
  system?: string;
  /** --chat-template: a Jinja file used instead of the model's tokenizer.chat_template. */
  chatTemplate?: string;
  fewShot?: number;
  /** false with --no-tty: plain output even on a terminal. */
  tty?: boolean;
  maxTokens?: number;
  temp?: number;
  seed?: number;
  hook?: string;
  /** false with --no-inject. */
  inject?: boolean;
  /** Model cache folder for hf: URIs. */
  modelsDir?: string;
  controlVector?: string[];
}

export async function chatCommand(opts: ChatOptions = {}): Promise<number> {
  let settings: ChatSettings;
  let hookSource: string | undefined;
  // A usage error (exit 2): thrown to runCli, which prints it without a stack trace.
  const chatTemplate =
    opts.chatTemplate !== undefined ? readChatTemplateFile(opts.chatTemplate) : undefined;
  try {
    settings = {
      maxTokens: opts.maxTokens ?? 256,
      sampling: { temperature: opts.temp ?? 0, seed: opts.seed ?? 0 },
      fewShot: opts.fewShot,
      system: opts.system !== undefined ? readText("--system", opts.system) : undefined,
      inject: opts.inject !== false,
    };
    if (opts.hook !== undefined) hookSource = readText("--hook", opts.hook);
  } catch (err) {
    process.stderr.write(`ruffian chat: ${(err as Error).message}\n`);
    return 1;
  }

  const interactive =
    opts.tty !== false && process.stdin.isTTY === true && process.stdout.isTTY === true;
  let engine;
  try {
    engine = await openModelWithProgress(opts.model ?? nanoModelPath, {
      directory: modelCacheDir(opts.modelsDir),
      device: opts.device,
      threads: opts.threads,
      chatTemplate,
      showProgress: interactive && process.stderr.isTTY === true,
    });
  } catch (err) {
    process.stderr.write(`ruffian chat: ${(err as Error).message}\n`);
    return 1;
  }
  try {
    Object.assign(settings, vectorRequest(opts.controlVector, engine));
  } catch (err) {
    process.stderr.write(`ruffian chat: ${(err as Error).message}\n`);
    engine.dispose();
    return 1;
  }
  try {
    const session = new ChatSession(engine, settings);
    if (hookSource !== undefined) {
      try {
        session.loadHook(opts.hook!, hookSource);
      } catch (err) {
        if (err instanceof HookError) throw new ReportedFailure(err.message);
        throw err;
      }
    }
    const io = { input: process.stdin, output: process.stdout };
    if (!interactive)
      return await pipeLoop(session, new PlainView(process.stdout, process.stderr), io);
    const view: ChatView = new TtyView(process.stdout, process.stderr, !process.env.NO_COLOR);
    banner(session, view);
    return await ttyLoop(session, view, io);
  } finally {
    engine.dispose();
  }
}

function readText(option: string, file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(
      `${option}: cannot read ${file}${code === "ENOENT" ? " (no such file)" : `: ${(err as Error).message}`}`,
    );
  }
}

function banner(session: ChatSession, view: ChatView): void {
  const t = view.tone;
  const how = {
    nano: "ruffian-nano: ask a question",
    "chat-template": "chat with the model's template and the [C: …] system prompt",
    plain: "plain continuation: the model continues your text",
  }[session.style];
  view.info(
    t.bold("ruffian chat") +
      t.dim(
        ` · ${basename(session.engine.model.path)} · ${how} · /help for commands, Ctrl-D leaves`,
      ),
  );
}
