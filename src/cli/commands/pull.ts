// `ruffian pull hf:…`: downloads a model into the model cache with a progress bar, so later runs
// (which never download by themselves) can open it.
import { parseModelSource, resolveModelPath, ModelSourceError } from "../../engine/model-source.js";
import { modelCacheDir } from "./models.js";

export interface PullOptions {
  /** Cache folder (default: $RUFFIAN_MODELS_DIR, else node-llama-cpp's models folder). */
  dir?: string;
}

export async function pullCommand(uri: string, opts: PullOptions = {}): Promise<number> {
  let source;
  try {
    source = parseModelSource(uri);
  } catch (err) {
    process.stderr.write(`ruffian pull: ${(err as Error).message}\n`);
    return 2;
  }
  if (source.kind !== "hf") {
    process.stderr.write(
      `ruffian pull: expected an hf: URI such as hf:<owner>/<repo>/<file>.gguf or ` +
        `hf:<owner>/<repo>:<quant>, got '${uri}' (local files need no pull)\n`,
    );
    return 2;
  }
  const directory = modelCacheDir(opts.dir);
  // The downloader retries an unreachable host for a long time; find out at once instead.
  const endpoint = huggingFaceEndpoint();
  const problem = await unreachable(endpoint);
  if (problem) {
    process.stderr.write(
      `ruffian pull: cannot reach ${endpoint} (${problem}); nothing was downloaded\n`,
    );
    return 1;
  }
  try {
    const path = await resolveModelPath(source.uri, {
      download: true,
      progress: process.stderr.isTTY === true,
      directory,
    });
    process.stdout.write(`${path}\n`);
    return 0;
  } catch (err) {
    const message = err instanceof ModelSourceError ? err.message : (err as Error).message;
    process.stderr.write(`ruffian pull: ${message}\n`);
    return 1;
  }
}

/** The Hugging Face endpoint node-llama-cpp downloads from (same environment variables). */
export function huggingFaceEndpoint(): string {
  for (const name of ["MODEL_ENDPOINT", "HF_ENDPOINT"]) {
    const value = process.env[name];
    if (value && /^https?:\/\//.test(value)) return value.endsWith("/") ? value : value + "/";
  }
  return "https://huggingface.co/";
}

/** Why the endpoint cannot be reached, or undefined when it answers (with any status). */
async function unreachable(endpoint: string, timeoutMs = 15_000): Promise<string | undefined> {
  try {
    await fetch(endpoint, { method: "HEAD", signal: AbortSignal.timeout(timeoutMs) });
    return undefined;
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    if ((err as Error).name === "TimeoutError") return `no answer in ${timeoutMs / 1000} s`;
    return cause?.code ?? cause?.message ?? (err as Error).message;
  }
}
