// `ruffian trace`: run a prompt with the cache on and write the named hook points (positions ×
// dims per tensor) to a safetensors file, with the model and tokens as metadata.
import { openEngine } from "../../engine/open.js";
import { defaultModelPath } from "../../paths.js";
import { expandHookPoints } from "../../steer/hook-points.js";
import { writeSafetensors } from "../../steer/safetensors.js";
import { traceTokens } from "../../steer/trace.js";
import { UsageError } from "../errors.js";
import { openOutputFile } from "../files.js";
import { closeSync } from "node:fs";

export interface TraceOptions {
  model?: string;
  prompt: string;
  hooks: string;
  out: string;
}

export async function traceCommand(opts: TraceOptions): Promise<number> {
  // A path that cannot be written fails before the model loads.
  closeSync(openOutputFile("--out", opts.out));
  const engine = await openEngine(opts.model ?? defaultModelPath, { download: false });
  try {
    let points;
    try {
      points = expandHookPoints(opts.hooks, engine.capabilities);
    } catch (err) {
      throw new UsageError(`--hooks: ${(err as Error).message}`);
    }
    const tokens = engine.tokenize(opts.prompt, { addSpecial: true });
    if (tokens.length > engine.capabilities.contextSize)
      throw new Error(
        `the prompt has ${tokens.length} tokens but the context holds ${engine.capabilities.contextSize}`,
      );
    const t0 = performance.now();
    const tensors = traceTokens(engine, tokens, points);
    const traceMs = performance.now() - t0;
    const bytes = writeSafetensors(opts.out, tensors, {
      format: "pt",
      model: engine.model.path,
      "model.architecture": engine.model.architecture,
      "model.description": engine.model.description,
      prompt: opts.prompt,
      tokens: JSON.stringify(tokens),
      token_texts: JSON.stringify(tokens.map((t) => engine.tokenText(t, { renderSpecial: true }))),
      hook_points: JSON.stringify(points.map((p) => ({ name: p.name, node: p.spec.node }))),
    });
    process.stderr.write(
      `${opts.out}: ${tensors.length} tensors × ${tokens.length} positions, ${bytes} bytes ` +
        `(traced in ${traceMs.toFixed(1)} ms)\n`,
    );
    return 0;
  } finally {
    engine.dispose();
  }
}
