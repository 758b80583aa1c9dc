// `ruffian steer train`: a control vector from contrastive examples (one per line), written in
// llama.cpp's control-vector GGUF format.
import { readFileSync } from "node:fs";
import { openEngine } from "../../engine/open.js";
import { defaultModelPath } from "../../paths.js";
import { writeControlVector } from "../../steer/control-vector.js";
import { parseLayers, trainControlVector, type TrainMethod } from "../../steer/train.js";

export interface SteerTrainOptions {
  model?: string;
  positive: string;
  negative: string;
  method?: string;
  layers?: string;
  out: string;
}

function examples(flag: string, path: string): string[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new Error(`${flag}: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
  const lines = text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  if (lines.length === 0) throw new Error(`${flag}: ${path} has no examples (one per line)`);
  return lines;
}

export async function steerTrainCommand(opts: SteerTrainOptions): Promise<number> {
  const method = (opts.method ?? "pca") as TrainMethod;
  if (method !== "pca" && method !== "mean-diff")
    throw new Error(`--method must be pca or mean-diff, got '${opts.method}'`);
  const positives = examples("--positive", opts.positive);
  const negatives = examples("--negative", opts.negative);
  const engine = await openEngine(opts.model ?? defaultModelPath, { download: false });
  try {
    const nLayer = engine.capabilities.nLayer;
    const layers = parseLayers(opts.layers ?? `1-${nLayer - 1}`, nLayer);
    const cv = trainControlVector(engine, positives, negatives, { method, layers });
    writeControlVector(opts.out, cv);
    const norms = [...cv.directions]
      .map(([l, v]) => `${l}:${Math.hypot(...v).toFixed(3)}`)
      .join(" ");
    process.stderr.write(
      `${opts.out}: ${method} control vector, ${positives.length}+${negatives.length} examples, ` +
        `layers ${layers.join(",")} (norms ${norms})\n`,
    );
    return 0;
  } finally {
    engine.dispose();
  }
}
