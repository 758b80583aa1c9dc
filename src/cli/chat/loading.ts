// Opens the chat's model with a progress bar on a terminal. llama.cpp reports no load progress
// through our engine, so the bar advances with the bytes a typical disk would have read by now
// and completes when the model is ready; without a TTY nothing is drawn.
import { statSync } from "node:fs";
import { basename } from "node:path";
import cliProgress from "cli-progress";
import { openEngine, type LlamaEngine, type OpenEngineOptions } from "../../engine/open.js";
import { resolveModelPath } from "../../engine/model-source.js";
import { formatBytes } from "../commands/models.js";

/** Bytes per second assumed for the estimate (about a SATA SSD). */
const ASSUMED_READ_RATE = 400 * 1024 * 1024;

export async function openModelWithProgress(
  model: string,
  options: OpenEngineOptions & { showProgress: boolean },
): Promise<LlamaEngine> {
  const { showProgress, ...open } = options;
  const path = await resolveModelPath(model, {
    download: false,
    directory: open.directory,
    progress: showProgress,
  });
  if (!showProgress) return openEngine(path, { ...open, download: false });
  let size = 0;
  try {
    size = statSync(path).size;
  } catch {
    // openEngine reports the missing file.
  }
  const bar = new cliProgress.SingleBar(
    {
      format: `loading ${basename(path)} (${formatBytes(size)}) [{bar}] {percentage}%`,
      stream: process.stderr,
      hideCursor: true,
      clearOnComplete: true,
      barsize: 24,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(100, 0);
  const t0 = performance.now();
  const timer = setInterval(() => {
    const expected = Math.max(0.2, size / ASSUMED_READ_RATE);
    const elapsed = (performance.now() - t0) / 1000;
    bar.update(Math.min(95, Math.round((100 * elapsed) / expected)));
  }, 100);
  try {
    const engine = await openEngine(path, { ...open, download: false });
    bar.update(100);
    return engine;
  } finally {
    clearInterval(timer);
    bar.stop();
  }
}
