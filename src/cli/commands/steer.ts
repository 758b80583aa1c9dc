// `ruffian steer train`: a control vector from contrastive examples (one per line), written in
// llama.cpp's control-vector GGUF format.
import { closeSync } from "node:fs";
import { openEngine } from "../../engine/open.js";
import { defaultModelPath } from "../../paths.js";
import { writeControlVector } from "../../steer/control-vector.js";
import { parseLayers, trainControlVector, type TrainMethod } from "../../steer/train.js";
import { UsageError } from "../errors.js";
import { openOutputFile, readOptionFile } from "../files.js";

export interface SteerTrainOptions {
  model?: string;
  positive: string;
  negative: string;
  method?: string;
  layers?: string;
  out: string;
}

function examples(flag: string, path: string): string[] {
  const lines = readOptionFile(flag, path)
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  if (lines.length === 0) throw new UsageError(`${flag}: ${path} has no examples (one per line)`);
  return lines;
}

export async function steerTrainCommand(opts: SteerTrainOptions): Promise<number> {
  // commander checks --method against its choices before this runs.
  const method = (opts.method ?? "pca") as TrainMethod;
  const positives = examples("--positive", opts.positive);
  const negatives = examples("--negative", opts.negative);
  closeSync(openOutputFile("--out", opts.out));
  const engine = await openEngine(opts.model ?? defaultModelPath, { download: false });
  try {
    const nLayer = engine.capabilities.nLayer;
    let layers: number[];
    try {
      layers = parseLayers(opts.layers ?? `1-${nLayer - 1}`, nLayer);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
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
