// `ruffian models`: lists the GGUF models in the model cache, the folder `ruffian pull` downloads
// into and `ruffian chat -m hf:…` reads from.
import { readdirSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { paint } from "../style.js";

export interface ModelsOptions {
  /** Cache folder (default: $RUFFIAN_MODELS_DIR, else node-llama-cpp's models folder). */
  dir?: string;
}

/** Where models are cached: an explicit folder, $RUFFIAN_MODELS_DIR, or ~/.node-llama-cpp/models. */
export function modelCacheDir(explicit?: string): string {
  if (explicit) return explicit;
  const env = process.env.RUFFIAN_MODELS_DIR;
  if (env) return env;
  return join(homedir(), ".node-llama-cpp", "models");
}

export interface CachedModel {
  file: string;
  path: string;
  bytes: number;
  architecture: string | undefined;
  name: string | undefined;
  /** Why the file could not be read as a GGUF model, if it could not. */
  problem: string | undefined;
}

/** Reads the folder and each model's GGUF header (local reads only). */
export async function listCachedModels(dir: string): Promise<CachedModel[]> {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.toLowerCase().endsWith(".gguf"));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
  const models: CachedModel[] = [];
  const { readGgufFileInfo } = await import("node-llama-cpp");
  for (const file of names.sort()) {
    const path = join(dir, file);
    const stat = statSync(path);
    if (!stat.isFile()) continue;
    const model: CachedModel = {
      file,
      path,
      bytes: stat.size,
      architecture: undefined,
      name: undefined,
      problem: undefined,
    };
    try {
      const info = await readGgufFileInfo(path, { readTensorInfo: false, logWarnings: false });
      model.architecture = info.metadata?.general?.architecture;
      model.name = info.metadata?.general?.name;
    } catch (err) {
      model.problem = `not a readable GGUF file (${(err as Error).message.split("\n")[0]})`;
    }
    models.push(model);
  }
  return models;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}

export async function modelsCommand(opts: ModelsOptions = {}): Promise<number> {
  const dir = modelCacheDir(opts.dir);
  let models: CachedModel[];
  try {
    models = await listCachedModels(dir);
  } catch (err) {
    process.stderr.write(
      `ruffian: cannot read the model cache ${dir}: ${(err as Error).message}\n`,
    );
    return 1;
  }
  if (models.length === 0) {
    process.stdout.write(
      `No models in ${dir}\nDownload one with: ruffian pull hf:<owner>/<repo>/<file>.gguf\n`,
    );
    return 0;
  }
  process.stdout.write(`${models.length} model${models.length === 1 ? "" : "s"} in ${dir}\n`);
  const width = Math.max(...models.map((m) => m.file.length));
  for (const m of models) {
    const about = m.problem
      ? paint.red(m.problem)
      : [...new Set([m.architecture, m.name].filter((x) => x !== undefined))].join("  ");
    process.stdout.write(
      `  ${m.file.padEnd(width)}  ${formatBytes(m.bytes).padStart(10)}  ${about}\n`,
    );
  }
  process.stdout.write(paint.dim(`Use one with: ruffian chat -m <path>\n`));
  return 0;
}
