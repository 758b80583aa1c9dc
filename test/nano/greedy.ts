// Greedy tokens from llama.cpp through node-llama-cpp, for the parity tests of the trained models.
import type { LlamaContext, LlamaModel, Token } from "node-llama-cpp";

/** Greedy tokens after `input`, up to end-of-generation or `max` tokens, on a fresh sequence. */
export async function greedyAfter(
  model: LlamaModel,
  context: LlamaContext,
  input: number[],
  max: number,
): Promise<number[]> {
  const seq = context.getSequence();
  const out: number[] = [];
  try {
    for await (const t of seq.evaluate(input as Token[], { temperature: 0 })) {
      if (model.isEogToken(t) || out.length >= max) break;
      out.push(t);
    }
  } finally {
    seq.dispose();
  }
  return out;
}
