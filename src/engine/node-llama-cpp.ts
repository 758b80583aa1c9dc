// The plain node-llama-cpp backend: loads a GGUF model through the library's public API.
// Used by the demo and as the reference peer that the glass-box engine is compared against.
import { getLlama, LlamaLogLevel, type Llama, type LlamaModel, type Token } from "node-llama-cpp";
import { existsSync } from "node:fs";
import { defaultThreadCount } from "./threads.js";

export interface NodeLlamaOptions {
  /** "auto" lets node-llama-cpp pick CUDA/Metal/Vulkan when present; tests pin "cpu". */
  device?: "auto" | "cpu";
  threads?: number;
  contextSize?: number;
}

export interface LoadedModel {
  llama: Llama;
  model: LlamaModel;
  threads: number;
  dispose(): Promise<void>;
}

export class ModelFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ModelFileError";
  }
}

let llamaPromise: Promise<Llama> | undefined;
let llamaDevice: string | undefined;

/** One Llama instance per process and device: creating it spawns a binary self-test (~650 ms). */
function sharedLlama(device: "auto" | "cpu"): Promise<Llama> {
  if (!llamaPromise || llamaDevice !== device) {
    llamaDevice = device;
    llamaPromise = getLlama({
      gpu: device === "cpu" ? false : "auto",
      build: "never",
      // stories260K triggers two harmless "bad special token" warnings at load time.
      logLevel: LlamaLogLevel.error,
    });
  }
  return llamaPromise;
}

export async function loadNodeLlamaModel(
  modelPath: string,
  options: NodeLlamaOptions = {},
): Promise<LoadedModel> {
  if (!existsSync(modelPath)) throw new ModelFileError(`model file not found: ${modelPath}`);
  const llama = await sharedLlama(options.device ?? "auto");
  let model: LlamaModel;
  try {
    model = await llama.loadModel({ modelPath });
  } catch (err) {
    throw new ModelFileError(`cannot load model ${modelPath}: ${(err as Error).message}`);
  }
  return {
    llama,
    model,
    threads: options.threads ?? defaultThreadCount(),
    dispose: () => model.dispose(),
  };
}

export interface StepInfo {
  token: Token;
  text: string;
  probability: number;
  /** Shannon entropy of the next-token distribution, in nats. */
  entropy: number;
}

/**
 * Greedy continuation of raw text, one token at a time, reporting each token's probability and
 * the entropy of the distribution it was chosen from.
 */
export async function* greedyContinue(
  loaded: LoadedModel,
  prompt: string,
  maxTokens: number,
): AsyncGenerator<StepInfo> {
  const context = await loaded.model.createContext({ contextSize: 512, threads: loaded.threads });
  try {
    const sequence = context.getSequence();
    // Plain (non-chat) llama models expect BOS first; without it stories260K drifts.
    const bos = loaded.model.tokens.bos;
    const textTokens = loaded.model.tokenize(prompt);
    const promptTokens: Token[] = bos !== null ? [bos, ...textTokens] : textTokens;
    // Feed everything but the last prompt token, then ask for a prediction after each token.
    if (promptTokens.length > 1)
      await sequence.evaluateWithoutGeneratingNewTokens(promptTokens.slice(0, -1));
    let last = promptTokens[promptTokens.length - 1]!;
    const emitted: Token[] = [];
    for (let i = 0; i < maxTokens; i++) {
      const [out] = await sequence.controlledEvaluate([
        [last, { generateNext: { token: true, probabilities: true } }],
      ]);
      const next = out?.next;
      if (!next || next.token === undefined || next.token === null) break;
      const token = next.token;
      if (loaded.model.isSpecialToken(token)) break;
      let entropy = 0;
      for (const p of next.probabilities?.values() ?? []) if (p > 0) entropy -= p * Math.log(p);
      const before = loaded.model.detokenize(emitted);
      emitted.push(token);
      const text = loaded.model.detokenize(emitted).slice(before.length);
      yield { token, text, probability: next.probabilities?.get(token) ?? 0, entropy };
      last = token;
    }
  } finally {
    await context.dispose();
  }
}
