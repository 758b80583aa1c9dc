// `ruffian serve`: the OpenAI-compatible server (src/server/). Prints its URL as soon as it
// listens (/health answers 503 "loading" until the model is in), then a line once it serves;
// SIGINT/SIGTERM stop it cleanly.
import { readFileSync } from "node:fs";
import { nanoModelPath } from "../../paths.js";
import type { VmProfileName } from "../../vm/limits.js";
import { modelCacheDir } from "./models.js";
import type { DecodeThread } from "../../server/server.js";
import { readChatTemplateFile } from "../files.js";

export interface ServeCommandOptions {
  model?: string;
  host?: string;
  port?: number;
  slots?: number;
  ctx?: number;
  apiKey?: string;
  apiKeyFile?: string;
  profile?: VmProfileName;
  queue?: number;
  deadline?: number;
  streamInterval?: number;
  decodeThread?: DecodeThread;
  glassBox?: boolean;
  /** --chat-template: a Jinja file used instead of the model's tokenizer.chat_template. */
  chatTemplate?: string;
  modelsDir?: string;
  controlVector?: string[];
}

function apiKeys(opts: ServeCommandOptions): string[] {
  if (opts.apiKey !== undefined && opts.apiKeyFile !== undefined)
    throw new Error("give either --api-key or --api-key-file, not both");
  if (opts.apiKey !== undefined) {
    if (opts.apiKey.trim() === "") throw new Error("--api-key must not be empty");
    return [opts.apiKey.trim()];
  }
  if (opts.apiKeyFile === undefined) return [];
  let text: string;
  try {
    text = readFileSync(opts.apiKeyFile, "utf8");
  } catch (err) {
    throw new Error(
      `--api-key-file: cannot read ${opts.apiKeyFile} (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
    );
  }
  const keys = text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
  if (keys.length === 0) throw new Error(`--api-key-file: ${opts.apiKeyFile} holds no key`);
  return keys;
}

export async function serveCommand(opts: ServeCommandOptions): Promise<number> {
  let settings;
  try {
    settings = {
      model: opts.model ?? nanoModelPath,
      host: opts.host ?? "127.0.0.1",
      port: opts.port ?? 8080,
      slots: opts.slots ?? 4,
      ctx: opts.ctx,
      apiKeys: apiKeys(opts),
      profile: opts.profile,
      queueLimit: opts.queue,
      deadlineMs: opts.deadline !== undefined ? opts.deadline * 1000 : undefined,
      streamIntervalMs: opts.streamInterval,
      decodeThread: opts.decodeThread,
      glassBox: opts.glassBox === true,
      modelsDir: modelCacheDir(opts.modelsDir),
      controlVectors: opts.controlVector,
      chatTemplate:
        opts.chatTemplate !== undefined ? readChatTemplateFile(opts.chatTemplate) : undefined,
    };
  } catch (err) {
    process.stderr.write(`ruffian serve: ${(err as Error).message}\n`);
    return 2;
  }
  const { startServer } = await import("../../server/server.js");
  let server;
  try {
    server = await startServer({
      ...settings,
      onListening: (url) =>
        process.stdout.write(`ruffian serve: listening on ${url}, loading ${settings.model} …\n`),
    });
  } catch (err) {
    process.stderr.write(`ruffian serve: ${(err as Error).message}\n`);
    return 1;
  }
  const ctx = server.context;
  process.stdout.write(
    `ruffian serve: ${server.url} · model ${ctx.modelId} · ${ctx.host.model.slots} slots × ` +
      `${ctx.limits.slotContext} tokens${ctx.apiKeys.length > 0 ? " · API key required" : ""}\n`,
  );
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  await server.close();
  return 0;
}
