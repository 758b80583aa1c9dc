// The library's model: load a GGUF model (a path or an hf: URI) and generate from it with the VM
// in the decode loop, as an async iterator of events. The CLI and the server use this same class.
import { openEngine } from "../engine/open.js";
import type { ControlVector } from "../steer/control-vector.js";
import type { LlamaEngine } from "../engine/open.js";
import type { DeviceChoice } from "../engine/llama/library.js";
import { DecodeLoop } from "../decode/loop.js";
import type { DecodeEvent } from "../decode/events.js";
import {
  promptStyle,
  renderPrompt,
  stopStrings,
  turnStopTokens,
  type PromptStyle,
} from "../decode/prompt.js";
import type { SamplerOptions } from "../decode/sampler.js";
import { createLiveVm, type LiveVm } from "../decode/sequence.js";
import { HookError } from "./hook-error.js";

export interface LoadModelOptions {
  /** "auto" (default) uses CUDA, Metal or Vulkan when usable, CPU otherwise; a backend that is
   * not available is an error that lists the available ones. */
  device?: DeviceChoice;
  /** llama.cpp threads (default: the machine's cores minus one, at least one). */
  threads?: number;
  /** KV cells (default: the model's training context, at most 4096). */
  contextSize?: number;
  /** Download an `hf:` model that is not cached yet (default false: never touches the network). */
  download?: boolean;
  /** Where `hf:` models are cached (default node-llama-cpp's models folder). */
  modelsDir?: string;
  /**
   * A Jinja chat template (its text) used instead of the model's own tokenizer.chat_template;
   * a template that does not parse throws an EngineError "chat-template". A name from
   * llama.cpp's built-in list ("chatml", "llama3" …) also works.
   */
  chatTemplate?: string;
}

export interface GenerateOptions {
  /** The user's text. */
  prompt: string;
  /**
   * "auto" (default): written in the model's own format when it has one (its chat template, or
   * ruffian-nano's Q:/A:); "plain": the prompt is continued as it stands.
   */
  format?: "auto" | "plain";
  /** Tokens to sample at most (default 256). */
  maxTokens?: number;
  /** Sampling (default greedy: temperature 0). */
  sampling?: SamplerOptions;
  /** Generation also stops when the text contains one of these (the stop text is cut off). */
  stop?: readonly string[];
  /**
   * A C program whose main() runs before the first token; it may register per-token hooks with
   * hook_set("fn", n), read and edit logits, checkpoint and rewind. Checked before anything is
   * generated: a program that does not compile throws a HookError.
   */
  hook?: string;
  /** The hook's name in error messages, e.g. its file path (default "hook"). */
  hookName?: string;
  /** false: regions are detected and reported, but nothing runs or is injected (default true). */
  inject?: boolean;
  /** A VM session from createVmSession(): functions, globals and memory[] carry over between
   * generations that pass the same one (default: a fresh session per generation). */
  vm?: VmSessionHandle;
  /** Stops the generation; the last event is then `done` with reason "aborted". */
  signal?: AbortSignal;
  /** Control vectors VM code may load by name with cvec_load (see docs/steering.md). */
  vectors?: ReadonlyMap<string, ControlVector>;
  /** A control vector (layer → scaled direction) applied for this generation, prompt included. */
  controlVector?: ReadonlyMap<number, Float32Array>;
}

/** A VM session bound to a model, kept across generate() calls (see GenerateOptions.vm). */
export interface VmSessionHandle {
  readonly live: LiveVm;
}

export class Model {
  /** @internal Use loadModel(). */
  constructor(
    /** The glass-box engine: tokenize, decode, logits, hidden states, attention, KV rewind
     * (docs/engine.md). Owned by this model; dispose() releases it. */
    readonly engine: LlamaEngine,
  ) {}

  /** How prompts are written for this model: "nano", "chat-template" or "plain". */
  get promptStyle(): PromptStyle {
    return promptStyle(this.engine);
  }

  /** A VM session whose definitions persist across the generations that pass it. */
  createVmSession(): VmSessionHandle {
    return { live: createLiveVm(this.engine, 0) };
  }

  /** Throws a HookError naming `name` if the hook program does not compile. */
  checkHook(source: string, name = "hook"): void {
    const error = createLiveVm(this.engine, 0).session.check(source);
    if (error) throw new HookError(name, error);
  }

  /**
   * Generates one answer, streaming events: `token`, `region-start`/`region-end`, `vm` (every VM
   * run, with its outcome), `injection`, `hook-log`/`hook-error`, `rewind`, and last `done` with
   * the final text and statistics. Throws a HookError at once when the hook does not compile.
   */
  generate(options: GenerateOptions): AsyncGenerator<DecodeEvent> {
    const hookName = options.hookName ?? "hook";
    if (options.hook !== undefined) {
      const error = (options.vm?.live.session ?? createLiveVm(this.engine, 0).session).check(
        options.hook,
      );
      if (error) throw new HookError(hookName, error);
    }
    const style = options.format === "plain" ? "plain" : this.promptStyle;
    const prompt =
      style === "plain"
        ? options.prompt
        : renderPrompt(this.engine, [{ role: "user", content: options.prompt }]);
    const loop = new DecodeLoop(this.engine, { signal: options.signal });
    const events = loop.run([
      {
        prompt,
        maxTokens: options.maxTokens ?? 256,
        sampling: options.sampling ?? { temperature: 0 },
        stop: [...stopStrings(style), ...(options.stop ?? [])],
        // A plain prompt is the model's text as it stands: only llama.cpp's own
        // end-of-generation tokens end it.
        stopTokens: style === "plain" ? undefined : turnStopTokens(this.engine),
        hook: options.hook,
        inject: options.inject ?? true,
        live: options.vm?.live,
        vectors: options.vectors,
        controlVector: options.controlVector,
      },
    ]);
    return failOnBrokenSetup(events, hookName);
  }

  /** Releases the model and its context. */
  dispose(): void {
    this.engine.dispose();
  }
}

/** A hook whose main() fails stops the generation before its first token. */
async function* failOnBrokenSetup(
  events: AsyncGenerator<DecodeEvent>,
  hookName: string,
): AsyncGenerator<DecodeEvent> {
  for await (const ev of events) {
    if (ev.type === "vm" && ev.origin === "setup" && !ev.outcome.ok) {
      await events.return(undefined);
      throw new HookError(hookName, ev.outcome.error);
    }
    yield ev;
  }
}

/** Loads a GGUF model from a path or an `hf:` URI (cached; downloaded only with download: true). */
export async function loadModel(model: string, options: LoadModelOptions = {}): Promise<Model> {
  const engine = await openEngine(model, {
    device: options.device,
    threads: options.threads,
    contextSize: options.contextSize,
    download: options.download ?? false,
    directory: options.modelsDir,
    chatTemplate: options.chatTemplate,
  });
  return new Model(engine);
}
