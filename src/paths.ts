// Locations inside the installed package (models, web assets), resolved from this file,
// never from the current directory, so `npx ruffian` works from anywhere.
import { fileURLToPath } from "node:url";
import { dirname, join, resolve } from "node:path";
import { existsSync } from "node:fs";

/** Walks up from this module to the folder holding Ruffian's own package.json. */
function findPackageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, "package.json")) && existsSync(join(dir, "models"))) return dir;
    const parent = resolve(dir, "..");
    if (parent === dir) throw new Error("ruffian: cannot locate the package root");
    dir = parent;
  }
}

export const packageRoot = findPackageRoot();
export const modelsDir = join(packageRoot, "models");

/** The plain-text model shipped with the package (llama2.c stories260K, MIT). */
export const storiesModelPath = join(modelsDir, "stories260K.gguf");

/** ruffian-nano, trained by this project to answer questions through the VM (training/). */
export const nanoModelPath = join(modelsDir, "ruffian-nano.gguf");
/** The same-size model trained to answer without the VM: the baseline of `ruffian eval --table`. */
export const nanoDirectModelPath = join(modelsDir, "ruffian-nano-direct.gguf");
/** The same model trained to use the tool-calling protocol (training/run-tools.sh makes it). */
export const nanoToolsModelPath = join(modelsDir, "ruffian-nano-tools.gguf");
/** Greedy answers of the trained PyTorch model, for the GGUF parity test. */
export const nanoParityPath = join(modelsDir, "ruffian-nano.parity.json");
/** Greedy references of ruffian-nano-tools from PyTorch, the tool call in place of the region. */
export const nanoToolsParityPath = join(modelsDir, "ruffian-nano-tools.parity.json");
/** ruffian-nano's recipe on Qwen2's real tokenizer in ChatML (qwen2, 151,936 tokens). */
export const nanoQwenModelPath = join(modelsDir, "ruffian-nano-qwen.gguf");
/** Greedy references of ruffian-nano-qwen from PyTorch, with the prompts' ids. */
export const nanoQwenParityPath = join(modelsDir, "ruffian-nano-qwen.parity.json");

/** The model used when the user names none. */
export const defaultModelPath = storiesModelPath;

/** The built web UI (`npm run build` bundles web/ into it), served by `ruffian serve` at `/`. */
export const webUiDir = join(packageRoot, "dist", "web");
