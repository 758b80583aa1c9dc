// Command-line option values: parsers that commander runs while parsing (so a bad value is a usage
// error, exit 2, before anything runs), and the options shared by the commands that load a model,
// whose defaults come from the environment and the config file (see config.ts).
import { InvalidArgumentError, Option, type Command } from "commander";
import { readUserConfig, SETTINGS, configPath, type SettingName } from "./config.js";
import { UsageError } from "./errors.js";

/** A parser for an integer option in [min, max]. */
export function integerBetween(min: number, max = Infinity): (raw: string) => number {
  return (raw) => {
    const n = Number(raw);
    if (raw.trim() === "" || !Number.isInteger(n) || n < min || n > max)
      throw new InvalidArgumentError(
        max === Infinity
          ? `expected an integer ≥ ${min}.`
          : `expected an integer from ${min} to ${max}.`,
      );
    return n;
  };
}

/** A parser for an integer option of at least `min`. */
export const integerAtLeast = (min: number) => integerBetween(min);

/** A parser for a number option in [min, max]. */
export function numberBetween(min: number, max = Infinity): (raw: string) => number {
  return (raw) => {
    const n = Number(raw);
    if (raw.trim() === "" || !Number.isFinite(n) || n < min || n > max)
      throw new InvalidArgumentError(
        max === Infinity
          ? `expected a number ≥ ${min}.`
          : `expected a number from ${min} to ${max}.`,
      );
    return n;
  };
}

export const DEVICES = ["auto", "cpu", "cuda", "vulkan", "metal"] as const;
export type Device = (typeof DEVICES)[number];

/** Values of the options that modelOptions() adds. */
export interface ModelOptionValues {
  model?: string;
  threads?: number;
  device?: Device;
}

/**
 * --model, --threads and --device, each taking $RUFFIAN_MODEL / $RUFFIAN_THREADS / $RUFFIAN_DEVICE
 * when the flag is absent; applyConfigDefaults() fills in the config file below those.
 */
export function modelOptions(builtinModel: string): Option[] {
  return [
    new Option("-m, --model <path>", `GGUF model file or hf: URI (default: ${builtinModel})`).env(
      SETTINGS.model.env,
    ),
    new Option("--threads <n>", "llama.cpp threads (default: cores − 1)")
      .env(SETTINGS.threads.env)
      .argParser(integerAtLeast(1)),
    new Option("--device <name>", "compute device")
      .env(SETTINGS.device.env)
      .choices(DEVICES)
      .default("auto"),
  ];
}

/**
 * Sets every option of `command` named in the config file whose value came from no flag and no
 * environment variable, checking the file's value with the option's own parser.
 */
export function applyConfigDefaults(command: Command): void {
  const names = Object.keys(SETTINGS) as SettingName[];
  const present = command.options.filter((o) => (names as string[]).includes(o.attributeName()));
  if (present.length === 0) return;
  const config = readUserConfig();
  for (const option of present) {
    const name = option.attributeName() as SettingName;
    const raw = config[name];
    const source = command.getOptionValueSource(name);
    if (raw === undefined || (source !== undefined && source !== "default")) continue;
    let value: unknown = raw;
    try {
      if (option.parseArg) value = option.parseArg(raw, undefined);
    } catch (err) {
      throw new UsageError(`config file ${configPath()}: "${name}": ${(err as Error).message}`);
    }
    command.setOptionValueWithSource(name, value, "config");
  }
}
