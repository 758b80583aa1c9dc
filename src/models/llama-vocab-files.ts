// llama.cpp's vocabulary-only GGUFs (real tokenizers: Qwen2, Llama 3, Phi-3, DeepSeek-Coder, GPT-2 …),
// their tokenizer test pairs and its chat templates, read out of the llama.cpp source that
// node-llama-cpp ships as a git bundle. Nothing is downloaded: the bundle is cloned once (bare, about
// a second) into the cache, and each file is copied out on first use.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../paths.js";

/** The bundle inside the installed node-llama-cpp package (MIT, like llama.cpp). */
export const llamaSourceBundle = join(
  packageRoot,
  "node_modules",
  "node-llama-cpp",
  "llama",
  "gitRelease.bundle",
);

export const defaultModelCache = join(packageRoot, "node_modules", ".cache", "ruffian");

/** The vocabularies the project exercises, by the name llama.cpp gives their files. */
export const REAL_VOCABULARIES = ["qwen2", "llama-bpe", "phi-3", "deepseek-coder", "gpt-2"] as const;
export type RealVocabulary = (typeof REAL_VOCABULARIES)[number];

function git(args: string[]): Buffer {
  return execFileSync("git", args, { maxBuffer: 256 << 20, stdio: ["ignore", "pipe", "pipe"] });
}

/** A bare clone of the bundle in the cache (made once; safe when processes race). */
function sourceRepository(cacheDir: string): string {
  const repo = join(cacheDir, "llama.cpp-source.git");
  if (existsSync(join(repo, "HEAD"))) return repo;
  if (!existsSync(llamaSourceBundle))
    throw new Error(
      `llama.cpp's source bundle is missing (${llamaSourceBundle}); reinstall node-llama-cpp`,
    );
  mkdirSync(cacheDir, { recursive: true });
  const partial = `${repo}.${process.pid}.partial`;
  rmSync(partial, { recursive: true, force: true });
  try {
    git(["clone", "--quiet", "--bare", llamaSourceBundle, partial]);
    try {
      renameSync(partial, repo);
    } catch (err) {
      if (!existsSync(join(repo, "HEAD"))) throw err; // another process won the race
    }
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
  return repo;
}

/** Copies one file of the llama.cpp source (a path inside its tree) into the cache. */
export function llamaSourceFile(path: string, cacheDir = defaultModelCache): string {
  const out = join(cacheDir, "llama.cpp-files", path.replaceAll("/", "__"));
  if (existsSync(out)) return out;
  const repo = sourceRepository(cacheDir);
  let bytes: Buffer;
  try {
    bytes = git(["--git-dir", repo, "show", `HEAD:${path}`]);
  } catch {
    throw new Error(`llama.cpp's source has no file ${path}`);
  }
  mkdirSync(join(cacheDir, "llama.cpp-files"), { recursive: true });
  const partial = `${out}.${process.pid}.partial`;
  writeFileSync(partial, bytes);
  renameSync(partial, out);
  return out;
}

/** The vocabulary-only GGUF of a real tokenizer (no weights: llama.cpp tokenizes with it). */
export function vocabularyFile(name: RealVocabulary, cacheDir = defaultModelCache): string {
  return llamaSourceFile(`models/ggml-vocab-${name}.gguf`, cacheDir);
}

/** llama.cpp's tokenizer test pairs for a vocabulary: each input text and its expected ids. */
export function tokenizerTestPairs(
  name: RealVocabulary,
  cacheDir = defaultModelCache,
): { text: string; ids: number[] }[] {
  const read = (ext: string): string =>
    git(["--git-dir", sourceRepository(cacheDir), "show", `HEAD:models/ggml-vocab-${name}.gguf.${ext}`]).toString(
      "utf8",
    );
  // As llama.cpp's test-tokenizer-0 reads them: inputs split on the separator (the file ends with
  // one), outputs one line of space-separated ids per input.
  const separator = "\n__ggml_vocab_test__\n";
  const raw = read("inp");
  const inputs = raw.split(separator);
  if (raw.endsWith(separator)) inputs.pop();
  const outputs = read("out").split("\n");
  if (outputs[outputs.length - 1] === "") outputs.pop();
  if (inputs.length !== outputs.length)
    throw new Error(`${name}: ${inputs.length} test inputs but ${outputs.length} outputs`);
  return inputs.map((text, i) => ({
    text,
    ids: outputs[i]!.trim() === "" ? [] : outputs[i]!.trim().split(/\s+/).map(Number),
  }));
}

/** A chat template from llama.cpp's models/templates (real models' Jinja, e.g. Llama 3.1's). */
export function llamaTemplateFile(name: string, cacheDir = defaultModelCache): string {
  return llamaSourceFile(`models/templates/${name}.jinja`, cacheDir);
}
