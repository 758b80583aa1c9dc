// The state of one chat: the conversation, the live VM session the model's regions and /exec
// share, the hooks in play, and how each turn's prompt is built for the model's prompt style.
import { HookError } from "../../api/hook-error.js";
import type { ChatMessage, Engine } from "../../engine/types.js";
import { DecodeLoop } from "../../decode/loop.js";
import type { DecodeEvent, DoneEvent, GenerationStats } from "../../decode/events.js";
import {
  promptStyle,
  renderPrompt,
  stopStrings,
  turnStopTokens,
  type PromptStyle,
} from "../../decode/prompt.js";
import { createLiveVm, type LiveVm } from "../../decode/sequence.js";
import type { SamplerOptions } from "../../decode/sampler.js";
import type { VmOutcome } from "../../vm/result.js";
import { builtinSystemPrompt, fewShotPrefix, DEFAULT_FEW_SHOT } from "./system-prompt.js";
import type { ControlVector } from "../../steer/control-vector.js";

export interface ChatSettings {
  maxTokens: number;
  sampling: SamplerOptions;
  /** A system prompt replacing the built-in one (chat-template models). */
  system?: string;
  /** Worked examples: in the built-in system prompt, or as a prefix for plain models. */
  fewShot?: number;
  inject: boolean;
  /** From --control-vector: applied to every turn, and loadable by name with cvec_load. */
  controlVector?: ReadonlyMap<number, Float32Array>;
  vectors?: ReadonlyMap<string, ControlVector>;
}

/** A hook function in play: how many more tokens it will be called for. */
export interface HookState {
  name: string;
  stepsLeft: number;
  calls: number;
}

export interface Totals {
  turns: number;
  sampledTokens: number;
  injectedTokens: number;
  vmCalls: number;
  hookCalls: number;
  rewinds: number;
  generationMs: number;
  execs: number;
}

/** Languages and blocks whose definitions persist in the VM, replayed by /load. */
export interface VmBlock {
  origin: "region" | "setup" | "exec";
  source: string;
}

export class ChatSession {
  readonly style: PromptStyle;
  messages: ChatMessage[] = [];
  live: LiveVm;
  /** C blocks whose definitions entered the VM session, in order. */
  blocks: VmBlock[] = [];
  /** A hook program loaded with /hook: it runs before the next generation. */
  pendingHook: { file: string; source: string } | undefined;
  /** Hooks of the current (or last) generation, tracked from hook_set calls and hook events. */
  readonly hooks = new Map<string, HookState>();
  totals: Totals = emptyTotals();
  last: DoneEvent | undefined;
  /** Entropy of the last sampled token, nats. */
  lastEntropy = NaN;
  /** Turns dropped from the front of the prompt to fit the context, in the last turn. */
  droppedTurns = 0;

  constructor(
    readonly engine: Engine,
    readonly settings: ChatSettings,
  ) {
    this.style = promptStyle(engine);
    this.live = this.newLiveVm();
  }

  /** The system prompt used for chat-template models (undefined for other styles). */
  get systemPrompt(): string | undefined {
    if (this.style !== "chat-template") return this.settings.system;
    return this.settings.system ?? builtinSystemPrompt(this.settings.fewShot ?? DEFAULT_FEW_SHOT);
  }

  private newLiveVm(): LiveVm {
    const live = createLiveVm(this.engine, 0);
    // hook_set is how a program arms a hook; watching it gives /hooks the step counts.
    const binding = live.binding;
    const hookSet = binding.hookSet.bind(binding);
    binding.hookSet = (fn: string, steps: number) => {
      hookSet(fn, steps);
      if (steps === 0) this.hooks.delete(fn);
      else this.hooks.set(fn, { name: fn, stepsLeft: steps, calls: 0 });
    };
    return live;
  }

  /** Forgets the conversation and starts a fresh VM session. */
  reset(): void {
    this.messages = [];
    this.blocks = [];
    this.live = this.newLiveVm();
    this.pendingHook = undefined;
    this.hooks.clear();
    this.totals = emptyTotals();
    this.last = undefined;
    this.lastEntropy = NaN;
  }

  /**
   * Arms a hook program for the next generation after checking that it compiles against this
   * chat's VM session; a program that does not compile throws a HookError naming `file`.
   */
  loadHook(file: string, source: string): void {
    const error = this.live.session.check(source);
    if (error) throw new HookError(file, error);
    this.pendingHook = { file, source };
  }

  /** Runs C typed by the user in the session the model's regions use. */
  exec(source: string): VmOutcome {
    const outcome = this.live.session.run(source);
    this.totals.execs++;
    if (committed(outcome)) this.blocks.push({ origin: "exec", source });
    return outcome;
  }

  /** The prompt for the conversation so far, dropping the oldest turns if it would not fit. */
  buildPrompt(): string {
    const budget = this.engine.capabilities.contextSize - this.settings.maxTokens;
    let first = 0;
    let prompt = this.render(this.messages);
    // Keep the last user message, whatever it costs; drop older turns until the prompt fits.
    while (first < this.messages.length - 1 && this.countTokens(prompt) > budget) {
      first++;
      while (first < this.messages.length - 1 && this.messages[first]!.role !== "user") first++;
      prompt = this.render(this.messages.slice(first));
    }
    this.droppedTurns = first;
    return prompt;
  }

  private countTokens(text: string): number {
    return this.engine.tokenize(text, { addSpecial: true, parseSpecial: true }).length;
  }

  private render(messages: ChatMessage[]): string {
    switch (this.style) {
      case "chat-template": {
        const system = this.systemPrompt;
        const all = system ? [{ role: "system", content: system }, ...messages] : messages;
        return renderPrompt(this.engine, all);
      }
      case "nano":
        return renderPrompt(this.engine, messages);
      case "plain": {
        // Base models continue text: each answer follows its message directly, and a new
        // message starts a new line.
        const prefix = this.settings.fewShot ? fewShotPrefix(this.settings.fewShot) : "";
        let text = prefix;
        messages.forEach((m, i) => {
          text += m.role === "user" && i > 0 ? `\n${m.content}` : m.content;
        });
        return text;
      }
    }
  }

  /**
   * Sends a user message and streams the generation's events to `onEvent`. The answer (also a
   * partial one, when stopped) joins the conversation.
   */
  async send(
    text: string,
    onEvent: (ev: DecodeEvent) => void | Promise<void>,
    signal?: AbortSignal,
  ): Promise<DoneEvent> {
    this.messages.push({ role: "user", content: text });
    const hook = this.pendingHook;
    this.pendingHook = undefined;
    this.hooks.clear();
    const loop = new DecodeLoop(this.engine, { signal });
    let done: DoneEvent | undefined;
    try {
      const prompt = this.buildPrompt();
      for await (const ev of loop.run([
        {
          prompt,
          maxTokens: this.settings.maxTokens,
          sampling: this.settings.sampling,
          stop: stopStrings(this.style),
          stopTokens: turnStopTokens(this.engine),
          hook: hook?.source,
          inject: this.settings.inject,
          live: this.live,
          reusePrefix: true,
          vectors: this.settings.vectors,
          controlVector: this.settings.controlVector,
        },
      ])) {
        this.observe(ev);
        if (ev.type === "done") done = ev;
        await onEvent(ev);
      }
    } catch (err) {
      this.messages.pop();
      throw err;
    }
    if (!done) throw new Error("the generation ended without a done event");
    this.messages.push({ role: "assistant", content: done.text });
    this.last = done;
    return done;
  }

  private observe(ev: DecodeEvent): void {
    switch (ev.type) {
      case "token":
        this.lastEntropy = ev.entropy;
        break;
      case "vm":
        if (ev.origin === "hook") {
          const name = ev.source.replace(/\(.*$/, "");
          const h = this.hooks.get(name);
          if (h) {
            h.stepsLeft = Math.max(0, h.stepsLeft - 1);
            h.calls++;
          }
        } else if (ev.language === "c" && committed(ev.outcome)) {
          this.blocks.push({ origin: ev.origin, source: ev.source });
        }
        break;
      case "hook-error":
        this.hooks.delete(ev.hook);
        break;
      case "done":
        addStats(this.totals, ev.stats);
        this.totals.turns++;
        for (const [name, h] of this.hooks) if (h.stepsLeft === 0) this.hooks.delete(name);
        break;
    }
  }
}

/** Whether a block's definitions entered the session: it compiled (it may still have trapped). */
function committed(outcome: VmOutcome): boolean {
  return outcome.ok || outcome.error.kind === "runtime" || outcome.error.kind === "limit";
}

function emptyTotals(): Totals {
  return {
    turns: 0,
    sampledTokens: 0,
    injectedTokens: 0,
    vmCalls: 0,
    hookCalls: 0,
    rewinds: 0,
    generationMs: 0,
    execs: 0,
  };
}

function addStats(t: Totals, s: GenerationStats): void {
  t.sampledTokens += s.sampledTokens;
  t.injectedTokens += s.injectedTokens;
  t.vmCalls += s.vmCalls;
  t.hookCalls += s.hookCalls;
  t.rewinds += s.rewinds;
  t.generationMs += s.totalMs;
}
