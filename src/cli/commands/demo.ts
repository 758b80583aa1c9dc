// `ruffian demo`: loads the shipped model and streams a greedy continuation with the
// entropy of each step, the smallest look inside the model that Ruffian offers.
import { defaultModelPath } from "../../paths.js";
import { greedyContinue, loadNodeLlamaModel } from "../../engine/node-llama-cpp.js";
import { paint } from "../style.js";

export interface DemoOptions {
  model?: string;
  prompt: string;
  maxTokens: string;
}

export async function demoCommand(opts: DemoOptions): Promise<void> {
  const maxTokens = Number(opts.maxTokens);
  if (!Number.isInteger(maxTokens) || maxTokens <= 0) {
    throw new Error(`--max-tokens must be a positive integer, got '${opts.maxTokens}'`);
  }
  const modelPath = opts.model ?? defaultModelPath;
  const out = process.stdout;
  const loaded = await loadNodeLlamaModel(modelPath);
  try {
    out.write(`${paint.dim(`model ${modelPath} · ${loaded.threads} thread(s)`)}\n`);
    out.write(paint.bold(opts.prompt));
    const steps = [];
    const started = performance.now();
    for await (const step of greedyContinue(loaded, opts.prompt, maxTokens)) {
      out.write(step.text);
      steps.push(step);
    }
    const ms = performance.now() - started;
    out.write("\n\n" + paint.dim("token              p        entropy (nats)") + "\n");
    for (const s of steps) {
      const bar = "█".repeat(Math.min(20, Math.round(s.entropy * 4)));
      out.write(
        `${JSON.stringify(s.text).padEnd(18)} ${s.probability.toFixed(3).padStart(5)}   ${s.entropy
          .toFixed(3)
          .padStart(6)} ${paint.cyan(bar)}\n`,
      );
    }
    out.write(paint.dim(`\n${steps.length} tokens in ${ms.toFixed(0)} ms`) + "\n");
  } finally {
    await loaded.dispose();
  }
}
