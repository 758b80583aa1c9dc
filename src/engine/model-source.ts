// Where a model comes from: a local GGUF path, or an `hf:` URI that node-llama-cpp resolves and
// (only when the user allows it) downloads with a progress bar.
import { existsSync } from "node:fs";
import { resolve } from "node:path";

export type ModelSource =
  | { kind: "file"; path: string }
  | {
      kind: "hf";
      /** The URI as node-llama-cpp expects it, e.g. "hf:owner/repo:Q4_K_M". */
      uri: string;
      owner: string;
      repo: string;
      /** A file path inside the repository, when named. */
      file: string | undefined;
      /** A quantization tag after ":", e.g. "Q4_K_M", when given instead of a file. */
      quant: string | undefined;
      branch: string | undefined;
    };

export class ModelSourceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ModelSourceError";
  }
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** Parses a model argument without touching the disk or the network. */
export function parseModelSource(arg: string): ModelSource {
  const text = arg.trim();
  if (text === "") throw new ModelSourceError("empty model argument");
  if (!/^hf:/i.test(text)) return { kind: "file", path: resolve(text) };

  const body = text.slice(3);
  const hash = body.indexOf("#");
  const branch = hash >= 0 ? body.slice(hash + 1) : undefined;
  const spec = hash >= 0 ? body.slice(0, hash) : body;
  if (branch !== undefined && branch === "")
    throw new ModelSourceError(`${text}: empty branch after "#"`);
  const parts = spec.split("/");
  const owner = parts[0] ?? "";
  let repo = parts[1] ?? "";
  let quant: string | undefined;
  const colon = repo.indexOf(":");
  if (colon >= 0) {
    quant = repo.slice(colon + 1);
    repo = repo.slice(0, colon);
    if (quant === "") throw new ModelSourceError(`${text}: empty quantization after ":"`);
  }
  if (!NAME.test(owner) || !NAME.test(repo))
    throw new ModelSourceError(
      `${text}: expected hf:<owner>/<repo>[:<quant>] or hf:<owner>/<repo>/<file.gguf>`,
    );
  const file = parts.length > 2 ? parts.slice(2).join("/") : undefined;
  if (file !== undefined) {
    if (quant !== undefined)
      throw new ModelSourceError(`${text}: give either a quantization or a file path, not both`);
    if (file === "" || parts.slice(2).some((p) => p === "" || p === "." || p === ".."))
      throw new ModelSourceError(`${text}: invalid file path "${file}" inside the repository`);
    if (!file.toLowerCase().endsWith(".gguf"))
      throw new ModelSourceError(`${text}: the file inside the repository must be a .gguf file`);
  }
  return { kind: "hf", uri: text.replace(/^hf:/i, "hf:"), owner, repo, file, quant, branch };
}

export interface ResolveOptions {
  /** Allow downloading an `hf:` model that is not cached yet (default false: never touch the net). */
  download?: boolean;
  /** Show node-llama-cpp's download progress bar (default true when downloading). */
  progress?: boolean;
  /** Where downloaded models live (node-llama-cpp's default models directory otherwise). */
  directory?: string;
}

/** Turns a model argument into a local GGUF path. */
export async function resolveModelPath(arg: string, options: ResolveOptions = {}): Promise<string> {
  const source = parseModelSource(arg);
  if (source.kind === "file") {
    if (!existsSync(source.path))
      throw new ModelSourceError(`model file not found: ${source.path}`);
    return source.path;
  }
  const { resolveModelFile } = await import("node-llama-cpp");
  try {
    return await resolveModelFile(source.uri, {
      directory: options.directory,
      download: options.download ? "auto" : false,
      cli: options.progress ?? true,
    });
  } catch (err) {
    const reason = (err as Error).message;
    throw new ModelSourceError(
      options.download
        ? `cannot download ${source.uri}: ${reason}`
        : `${source.uri} is not downloaded yet (downloads happen only when asked): ${reason}`,
    );
  }
}
