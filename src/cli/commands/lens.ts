// `ruffian lens`: the logit lens — for each position and layer, the top tokens obtained by
// applying the final norm and the unembedding to that layer's residual stream.
import { openEngine } from "../../engine/open.js";
import { defaultModelPath } from "../../paths.js";
import { loadUnembedding, logitLens, topTokens, type TopToken } from "../../steer/lens.js";
import { traceTokens } from "../../steer/trace.js";
import { expandHookPoints } from "../../steer/hook-points.js";
import { paint } from "../style.js";

export interface LensOptions {
  model?: string;
  prompt: string;
  top: number;
  json?: boolean;
}

export async function lensCommand(opts: LensOptions): Promise<number> {
  const k = opts.top;
  const engine = await openEngine(opts.model ?? defaultModelPath, { download: false });
  try {
    const unembed = loadUnembedding(engine);
    const tokens = engine.tokenize(opts.prompt, { addSpecial: true });
    const caps = engine.capabilities;
    const points = expandHookPoints("blocks.*.hook_resid_post,logits", caps);
    const logits = traceTokens(engine, tokens, points, 0).find((t) => t.name === "logits")!;
    const grid = logitLens(engine, unembed, 0, tokens.length, k);
    const text = (t: number) => engine.tokenText(t, { renderSpecial: true });
    const model = tokens.map((_, pos) =>
      topTokens(logits.data.subarray(pos * caps.nVocab, (pos + 1) * caps.nVocab), k),
    );
    if (opts.json) {
      const cell = (c: TopToken[]) =>
        c.map((t) => ({ token: t.token, text: text(t.token), prob: t.prob }));
      process.stdout.write(
        JSON.stringify({
          tokens: tokens.map((t) => ({ token: t, text: text(t) })),
          layers: grid.map((row) => row.map(cell)),
          output: model.map(cell),
        }) + "\n",
      );
      return 0;
    }
    const show = (c: TopToken[]) =>
      c.map((t) => `${JSON.stringify(text(t.token)).padEnd(10)} ${t.prob.toFixed(3)}`).join("  ");
    for (let pos = 0; pos < tokens.length; pos++) {
      process.stdout.write(paint.bold(`pos ${pos} ${JSON.stringify(text(tokens[pos]!))}\n`));
      grid.forEach((row, layer) =>
        process.stdout.write(`  L${String(layer).padEnd(4)} ${show(row[pos]!)}\n`),
      );
      process.stdout.write(paint.dim(`  model ${show(model[pos]!)}\n`));
    }
    return 0;
  } finally {
    engine.dispose();
  }
}
