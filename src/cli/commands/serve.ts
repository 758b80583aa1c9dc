// `ruffian serve`: the OpenAI-compatible server (src/server/). Prints its URL once the model is
// loaded and it listens; SIGINT/SIGTERM stop it cleanly.
import { readFileSync } from "node:fs";
import { nanoModelPath } from "../../paths.js";
import { PROFILES, type VmProfileName } from "../../vm/limits.js";
import { parseIntOption } from "../options.js";
import { modelCacheDir } from "./models.js";

export interface ServeCommandOptions {
  model?: string;
  host?: string;
  port?: string;
  slots?: string;
  ctx?: string;
  apiKey?: string;
  apiKeyFile?: string;
  profile?: string;
  queue?: string;
  deadline?: string;
  glassBox?: boolean;
  modelsDir?: string;
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
    if (opts.profile !== undefined && !(opts.profile in PROFILES))
      throw new Error(
        `--profile must be one of ${Object.keys(PROFILES).join(", ")}, got '${opts.profile}'`,
      );
    settings = {
      model: opts.model ?? nanoModelPath,
      host: opts.host ?? "127.0.0.1",
      port: parseIntOption("--port", opts.port ?? "8080", 0),
      slots: parseIntOption("--slots", opts.slots ?? "4", 1),
      ctx: opts.ctx !== undefined ? parseIntOption("--ctx", opts.ctx, 16) : undefined,
      apiKeys: apiKeys(opts),
      profile: opts.profile as VmProfileName | undefined,
      queueLimit: opts.queue !== undefined ? parseIntOption("--queue", opts.queue, 0) : undefined,
      deadlineMs:
        opts.deadline !== undefined
          ? parseIntOption("--deadline", opts.deadline, 1) * 1000
          : undefined,
      glassBox: opts.glassBox === true,
      modelsDir: modelCacheDir(opts.modelsDir),
    };
    if (settings.slots > 256) throw new Error(`--slots must be at most 256, got ${settings.slots}`);
  } catch (err) {
    process.stderr.write(`ruffian serve: ${(err as Error).message}\n`);
    return 2;
  }
  const { startServer } = await import("../../server/server.js");
  let server;
  try {
    server = await startServer(settings);
  } catch (err) {
    process.stderr.write(`ruffian serve: ${(err as Error).message}\n`);
    return 1;
  }
  const ctx = server.context;
  process.stdout.write(
    `ruffian serve: ${server.url} · model ${ctx.modelId} · ${ctx.scheduler.slots} slots × ` +
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
