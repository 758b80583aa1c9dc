// User defaults for the CLI: a JSON config file and RUFFIAN_* environment variables. Precedence,
// highest first: command-line flag > environment variable > config file > built-in default.
// Commander applies the first three (Option.env and Option.default); this module reads the file.
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { UsageError } from "./errors.js";

/** Every setting the config file may hold, with its environment variable and how it is checked. */
export const SETTINGS = {
  model: { env: "RUFFIAN_MODEL", describe: "a GGUF path or hf: URI" },
  threads: { env: "RUFFIAN_THREADS", describe: "an integer ≥ 1" },
  device: { env: "RUFFIAN_DEVICE", describe: "auto, cpu, cuda, vulkan or metal" },
} as const;

export type SettingName = keyof typeof SETTINGS;
export type UserConfig = Partial<Record<SettingName, string>>;

/** $RUFFIAN_CONFIG, else $XDG_CONFIG_HOME/ruffian/config.json, else ~/.config/ruffian/config.json. */
export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.RUFFIAN_CONFIG) return env.RUFFIAN_CONFIG;
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config");
  return join(base, "ruffian", "config.json");
}

/** Reads the config file; a missing file is an empty config, a malformed one a usage error. */
export function readUserConfig(path = configPath()): UserConfig {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw new UsageError(`cannot read the config file ${path}: ${(err as Error).message}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`config file ${path} is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof data !== "object" || data === null || Array.isArray(data))
    throw new UsageError(`config file ${path} must hold a JSON object`);
  const config: UserConfig = {};
  for (const [key, value] of Object.entries(data)) {
    if (!(key in SETTINGS)) {
      throw new UsageError(
        `config file ${path}: unknown setting "${key}" (known: ${Object.keys(SETTINGS).join(", ")})`,
      );
    }
    if (typeof value !== "string" && typeof value !== "number")
      throw new UsageError(
        `config file ${path}: "${key}" must be ${SETTINGS[key as SettingName].describe}`,
      );
    config[key as SettingName] = String(value);
  }
  return config;
}
