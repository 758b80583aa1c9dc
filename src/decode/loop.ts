// The in-band decode loop: samples each token in TypeScript, scans generated text for code
// regions, runs them in the sequence's VM and evaluates the result into the KV cache before the
// next token is sampled. Several sequences advance together, one batched decode per step.
//
// Order within one step of one sequence:
//   1. load the engine's logits; replay edits a region program made on the previous step;
//   2. run hooks (each may read and edit the logits, print to the hook console, request a rewind);
//   3. sample, feed the token's text to the scanner, emit events;
//   4. decode the token (all sequences in one batch);
//   5. if a region closed: run it (its reads see the distribution right after the region), inject
//      the result (a second batched decode), and keep its logit edits for step 1 of the next token.
//      With a `regionRunner`, a region that may run long and cannot read the model
//      (region-offload.ts) runs on a VM worker instead: its sequence samples nothing until the
//      outcome is back, the others go on stepping, and the result is injected at the start of
//      the step after it arrives.
// A region program's checkpoints point past its injected result; rewinds happen after the code
// that asked for them returns.
// When the engine decodes on another thread, step 4 starts right after the tokens are sampled
// and scanned, and the hooks that cannot change the sampling, the token statistics and the
// events are done while it runs (docs/decode-loop.md, "Overlap with the next decode").
import type { Engine, ObserveOptions } from "../engine/types.js";
import { EngineError } from "../engine/errors.js";
import type { VmOutcome } from "../vm/result.js";
import type { VmProfileName } from "../vm/limits.js";
import { runCalc } from "../calc/calc.js";
import { formatInjection } from "./injection.js";
import { continuationTokens } from "./continuation.js";
import type { DecodeEvent, TokenEvent } from "./events.js";
import type { Region, RegionSyntax } from "./scanner.js";
import type { SamplerOptions } from "./sampler.js";
import { SequenceState, type LiveVm } from "./sequence.js";
import { TOP_K_CAPACITY } from "./logit-state.js";
import { sameDirections, type ControlVector } from "../steer/control-vector.js";
import type { VmWorkerRunner } from "../vm/worker-runner.js";
import { offloadJob } from "./region-offload.js";

export interface GenerationRequest {
  /** Engine sequence id (default 0). */
  seq?: number;
  /** The full prompt text (already rendered with a chat template when the model has one). */
  prompt: string;
  /** The prompt's tokens when the caller already has them (as `engine.tokenize(prompt,
   * { addSpecial: true, parseSpecial: true })` gives them), so they are not made again. */
  promptTokens?: readonly number[];
  maxTokens?: number;
  /** Sampling; default greedy. */
  sampling?: SamplerOptions;
  /** Generation stops when the text contains one of these (the stop text is cut off). */
  stop?: readonly string[];
  /** Tokens that end the generation as end-of-generation tokens do (reason "eos", the token
   * not shown): a chat template's end of turn that llama.cpp does not mark (turnStopTokens). */
  stopTokens?: readonly number[];
  /** A C program whose main() runs once before generation (may call hook_set, vm_checkpoint …). */
  hook?: string;
  syntaxes?: readonly RegionSyntax[];
  /** false: regions are still detected and reported, but nothing is run or injected. */
  inject?: boolean;
  /** Keep the VM session (functions, globals, memory[]) across generations. */
  live?: LiveVm;
  /** Reuse the longest prefix of the sequence's KV cache that matches the new prompt. */
  reusePrefix?: boolean;
  /** Control vectors VM code may load by name with cvec_load (see docs/steering.md). */
  vectors?: ReadonlyMap<string, ControlVector>;
  /** A control vector (layer → scaled direction) for this request only, prompt included. */
  controlVector?: ReadonlyMap<number, Float32Array>;
  /** Sandbox profile of the sequence's VM session when it makes one (default: the VM's). */
  profile?: VmProfileName;
  /** Token events carry this many most likely alternatives with log-probabilities (default 0). */
  topLogprobs?: number;
  /** Whether token events carry probability and entropy (default: the loop's tokenStats). */
  tokenStats?: boolean;
}

/** Hands requests to a long-lived loop (continuous batching); see DecodeLoop.run. */
export interface RequestIntake {
  /** Requests that join at the next step (each on a sequence no running request uses). */
  take(): GenerationRequest[];
  /** Called while no sequence is active: resolves true when requests wait, false to stop. */
  wait(): Promise<boolean>;
  /** Called after a step's tokens were sampled and their events yielded, before their decode:
   * what was sampled can leave now rather than one decode later. */
  sampled?(): void;
}

export interface DecodeLoopOptions {
  /** Which activations the engine records for glass-box intrinsics (default: all it can). */
  observe?: ObserveOptions;
  /** Compute the probability and entropy of every sampled token (default true). */
  tokenStats?: boolean;
  signal?: AbortSignal;
  /** Runs regions that do not read the model on VM workers, so that a region computing for
   * seconds stalls only its own sequence (default: every region runs on this thread). */
  regionRunner?: VmWorkerRunner;
  /** Overlap each step's statistics, events and sampling-neutral hooks with the decode of its
   * tokens when the engine decodes on another thread (capabilities.backgroundDecode). Default:
   * RUFFIAN_OVERLAP=1 or 0 in the environment, else off (see OVERLAP_BY_DEFAULT). */
  overlap?: boolean;
}

/** Work on a step's token that may wait until the step's decode is under way: the hooks that
 * cannot change the sampling, counting the token, its statistics and alternatives. */
interface StepWork {
  s: SequenceState;
  /** Where the step's events begin in the sequence's queue (hook events go there). */
  mark: number;
  token: number;
  /** The hooks of this step have yet to run (they were judged sampling-neutral). */
  hooksPending: boolean;
  counted: boolean;
  /** The step's token event, whose statistics are filled in by settle(). */
  event: TokenEvent | undefined;
  filled: boolean;
}

/**
 * The overlap is opt-in. On this project's 2-core VMs the asynchronous decode's round trip (two
 * thread wake-ups, ~0.1 ms) and a decode slowed by the JavaScript beside it cost more than the
 * work it hides: at 151,936 tokens with statistics and a reading hook, 1.23-1.26x bare against
 * 1.18-1.20x without it on a quiet machine; slower at 512 and neutral at 32,000, and no gain in
 * the server (docs/benchmarks.md). It is kept for machines where the decode does not compete
 * with JavaScript for a core or for memory bandwidth (a GPU), which were not measured.
 */
const OVERLAP_BY_DEFAULT = false;

/** Whether a sequence's token events carry the token's probability and entropy (asked for
 * directly, or needed by the alternatives of `logprobs`). */
const wantsStats = (s: SequenceState): boolean =>
  s.options.tokenStats || (s.options.topLogprobs ?? 0) > 0;

/** How long the loop may run without letting the event loop in (signals, I/O, timers). */
const YIELD_EVERY_MS = 5;

/** Tokens currently in each engine sequence, so a later request can reuse a common prefix. */
const kvContents = new WeakMap<Engine, Map<number, number[]>>();

/** The control vector each sequence's cached KV was computed under: a prefix is only reused
 * under the same one. */
const kvVectors = new WeakMap<Engine, Map<number, ReadonlyMap<number, Float32Array> | null>>();

function kvVectorOf(engine: Engine): Map<number, ReadonlyMap<number, Float32Array> | null> {
  let m = kvVectors.get(engine);
  if (!m) kvVectors.set(engine, (m = new Map()));
  return m;
}

function kvOf(engine: Engine, seq: number): number[] {
  let m = kvContents.get(engine);
  if (!m) kvContents.set(engine, (m = new Map()));
  let tokens = m.get(seq);
  if (!tokens) m.set(seq, (tokens = []));
  return tokens;
}

/** The tokens in an engine sequence's KV cache, as decode loops left them (for prefix reuse). */
export function cachedTokens(engine: Engine, seq: number): readonly number[] {
  return kvOf(engine, seq);
}

/** Tokens sampled for one sequence at one step (one, or the re-tokenized piece of a token cut
 * at a region's end), and the text offset where they start. */
interface Sampled {
  seq: number;
  tokens: number[];
  offset: number;
}

/** A region's outcome, ready to be injected into its sequence. */
interface RegionRun {
  s: SequenceState;
  region: Region;
  outcome: VmOutcome;
}

export class DecodeLoop {
  /** The sequences of the running generation (their logits must survive partial decodes). */
  private active: SequenceState[] = [];
  /** Sequences to end at the start of the next step (see cancel). */
  private readonly cancelled = new Set<number>();
  /** Wakes the loop while it sleeps because every sequence waits for a VM worker. */
  private wakeLoop: (() => void) | undefined;
  /** Whether a failure in one sequence's work ends only that sequence (see fail). */
  private isolate = false;
  /** The step's decode while it runs (see run's finally). */
  private decoding: Promise<void> | undefined;
  private readonly overlap: boolean;

  constructor(
    readonly engine: Engine,
    readonly options: DecodeLoopOptions = {},
  ) {
    // Only an engine that decodes on another thread has anything to overlap with.
    const env = process.env.RUFFIAN_OVERLAP;
    const asked = options.overlap ?? (env === "0" ? false : env === "1" ? true : undefined);
    this.overlap = engine.capabilities.backgroundDecode && (asked ?? OVERLAP_BY_DEFAULT);
  }

  /**
   * Generates for every request together and streams the events of all of them. With an
   * `intake`, the loop is long-lived (continuous batching): requests it hands over join at the
   * next step, finished sequences leave, and the loop waits for work while none is active.
   */
  async *run(
    requests: readonly GenerationRequest[],
    intake?: RequestIntake,
  ): AsyncGenerator<DecodeEvent> {
    const engine = this.engine;
    const caps = engine.capabilities;
    engine.observe(
      this.options.observe ?? {
        hidden: caps.reads.hidden,
        attention: caps.reads.attention,
        kv: caps.reads.kv,
        finalNorm: caps.reads.finalNorm,
      },
    );
    this.active = [];
    this.isolate = intake !== undefined;
    try {
      this.admit(requests);
      for (let ev = this.nextEvent(this.active); ev; ev = this.nextEvent(this.active)) yield ev;

      let lastYield = performance.now();
      for (;;) {
        if (intake) {
          const joining = intake.take();
          if (joining.length > 0) {
            this.admit(joining);
            for (let ev = this.nextEvent(this.active); ev; ev = this.nextEvent(this.active))
              yield ev;
          }
        }
        const seqs = this.active;
        for (const s of seqs) {
          if (this.cancelled.has(s.seq) || this.options.signal?.aborted) s.finish("aborted");
        }
        this.cancelled.clear();
        if (!seqs.some((s) => !s.done)) {
          for (let ev = this.nextEvent(seqs); ev; ev = this.nextEvent(seqs)) yield ev;
          this.active = [];
          if (!intake || !(await intake.wait())) break;
          lastYield = performance.now();
          continue;
        }
        this.injectOffloaded(seqs);
        const items: Sampled[] = [];
        const owners: SequenceState[] = [];
        const late: StepWork[] = [];
        for (const s of seqs) {
          if (s.done || s.offloaded) continue;
          let next: Sampled | null;
          try {
            next = this.chooseNext(s, late);
          } catch (err) {
            this.fail(s, err);
            continue;
          }
          if (next) {
            items.push(next);
            owners.push(s);
          }
        }
        if (items.length > 0) {
          this.applySteering(owners);
          this.preserveLogits(owners);
          const sampled = owners.slice();
          const full = this.dropUnfit(items, owners);
          // Ending a sequence may touch the engine (its control vector is restored): done
          // before the decode starts, after what its step left for later.
          for (const s of full) {
            for (const work of late) if (work.s === s) this.settle(work);
            this.finishFull(s);
          }
          // While the tokens decode (on the core llama.cpp's thread count leaves free), finish
          // the step's work on them (when some sequence left any: see chooseNext).
          const decoded = (this.decoding =
            late.length > 0 ? this.decodeAsync(items, owners) : undefined);
          // Awaited below, after the events: a failure meanwhile is not an unhandled one.
          decoded?.catch(() => undefined);
          const failed = this.settleAll(late);
          // The tokens just sampled need not wait for their own decode (a request's first token,
          // above all: at 16 sequences a step is a few milliseconds).
          for (let ev = this.nextEvent(sampled); ev; ev = this.nextEvent(sampled)) yield ev;
          intake?.sampled?.();
          if (decoded) await decoded;
          else this.decodeFitting(items, owners);
          this.decoding = undefined;
          for (const { s, err } of failed) this.fail(s, err);
          for (let i = 0; i < owners.length; i++) {
            owners[i]!.append(items[i]!.tokens, items[i]!.offset);
            this.cacheTokens(owners[i]!, items[i]!.tokens);
          }
          this.runClosedRegions(owners);
        }
        for (let ev = this.nextEvent(seqs); ev; ev = this.nextEvent(seqs)) yield ev;
        if (seqs.some((s) => s.done)) this.active = seqs.filter((s) => !s.done);
        if (this.active.length > 0 && this.active.every((s) => s.waitingForWorker)) {
          // Every sequence waits for a VM worker: sleep until an outcome, a request or a cancel.
          const signal = this.options.signal;
          let onAbort: (() => void) | undefined;
          await new Promise<void>((resolve) => {
            this.wakeLoop = onAbort = resolve;
            void intake?.wait().then(() => resolve());
            signal?.addEventListener("abort", onAbort, { once: true });
          });
          signal?.removeEventListener("abort", onAbort!);
          this.wakeLoop = undefined;
          lastYield = performance.now();
        } else if (performance.now() - lastYield > YIELD_EVERY_MS) {
          // Let timers, signals and I/O run every few milliseconds (a synchronous decode never
          // lets them in; an awaited one does).
          await new Promise<void>((resolve) => setImmediate(resolve));
          lastYield = performance.now();
        }
      }
    } finally {
      // A consumer that stops early must not leave a decode running on the engine.
      await this.decoding?.catch(() => undefined);
      this.decoding = undefined;
    }
  }

  /** Ends a running sequence with reason "aborted" at the start of the next step. */
  cancel(seq: number): void {
    this.cancelled.add(seq);
    this.wakeLoop?.();
  }

  /** Creates the sequences of new requests, evaluates their prompts and runs their hook setup. */
  private admit(requests: readonly GenerationRequest[]): void {
    if (requests.length === 0) return;
    const engine = this.engine;
    const caps = engine.capabilities;
    const seqs = requests.map((r) => {
      const seq = r.seq ?? 0;
      if (seq < 0 || seq >= caps.maxSequences) {
        throw new RangeError(`sequence ${seq} is outside 0..${caps.maxSequences - 1}`);
      }
      return new SequenceState(engine, {
        seq,
        maxTokens: r.maxTokens ?? 256,
        sampling: r.sampling ?? { temperature: 0 },
        stop: r.stop ?? [],
        stopTokens: r.stopTokens?.length ? new Set(r.stopTokens) : undefined,
        syntaxes: r.syntaxes,
        inject: r.inject ?? true,
        live: r.live,
        profile: r.profile,
        topLogprobs: r.topLogprobs,
        tokenStats: r.tokenStats ?? this.options.tokenStats !== false,
        vectors: r.vectors,
        controlVector: r.controlVector,
      });
    });
    const inUse = [...this.active.filter((s) => !s.done), ...seqs].map((s) => s.seq);
    if (new Set(inUse).size !== inUse.length) {
      throw new Error("two requests use the same sequence");
    }
    for (const s of seqs) this.cancelled.delete(s.seq);
    // The prompts' decode overwrites llama.cpp's logits of the sequences already running.
    this.preserveLogits(seqs);
    this.active.push(...seqs);
    this.prefill(seqs, requests);
    for (let i = 0; i < seqs.length; i++) {
      const hook = requests[i]!.hook;
      if (hook === undefined || seqs[i]!.done) continue;
      try {
        this.runSetup(seqs[i]!, hook);
      } catch (err) {
        this.fail(seqs[i]!, err);
      }
    }
  }

  /**
   * A decode overwrites llama.cpp's logits buffer for every sequence. Before decoding only some
   * sequences, copy aside the next-token logits of the others that still need them.
   */
  private preserveLogits(decoding: readonly SequenceState[]): void {
    for (const s of this.active) {
      // A sequence waiting for a VM worker gets fresh logits from its injection's decode.
      if (s.done || s.offloaded || s.hasSavedLogits || decoding.includes(s)) continue;
      try {
        s.saveLogits(this.engine.logits(s.seq));
      } catch {
        // No logits from the last decode: nothing to keep.
      }
    }
  }

  /** The next-token logits of a sequence: a copy kept aside, or the engine's buffer. */
  private takeLogits(s: SequenceState): Float32Array {
    return s.takeSavedLogits() ?? this.engine.logits(s.seq);
  }

  /**
   * Decodes a batch. A sequence with no room left for its tokens ends with reason
   * "context-full" and leaves the batch (it is removed from `items` and `owners`); the others
   * are decoded: one request filling its slot must not end the requests beside it.
   */
  private decodeFitting(
    items: Array<{ seq: number; tokens: number[] }>,
    owners: SequenceState[],
  ): void {
    for (const s of this.dropUnfit(items, owners)) this.finishFull(s);
    this.decodeFitted(items, owners);
  }

  /** Removes from the batch the sequences with no room left for their tokens; returns them
   * (the caller ends them with finishFull). */
  private dropUnfit(
    items: Array<{ seq: number; tokens: number[] }>,
    owners: SequenceState[],
  ): SequenceState[] {
    const full: SequenceState[] = [];
    for (let i = items.length - 1; i >= 0; i--) {
      if (items[i]!.tokens.length <= this.engine.freeCells(items[i]!.seq)) continue;
      full.unshift(owners[i]!);
      items.splice(i, 1);
      owners.splice(i, 1);
    }
    return full;
  }

  /** decodeFitted with the first llama_decode on the engine's worker thread (decodeAsync); a
   * batch that finds no KV slot goes the synchronous way, which makes room. */
  private async decodeAsync(
    items: Array<{ seq: number; tokens: number[] }>,
    owners: SequenceState[],
  ): Promise<void> {
    if (items.length === 0) return;
    try {
      await this.engine.decodeAsync(items);
    } catch (err) {
      if (!(err instanceof EngineError) || err.code !== "context-full") throw err;
      this.decodeFitted(items, owners);
      return;
    }
    for (const s of owners) s.dropSavedLogits();
  }

  /** Decodes a batch whose sequences each have room, making room in the shared KV buffer
   * when llama.cpp finds no slot. */
  private decodeFitted(
    items: Array<{ seq: number; tokens: number[] }>,
    owners: SequenceState[],
  ): void {
    const engine = this.engine;
    // With one shared KV buffer the sequences compete for the same free cells, and llama.cpp
    // may still find no slot: then the sequence holding the most cells makes room, and the
    // others are tried again (a failed llama_decode is undone first).
    while (items.length > 0) {
      const before = items.map((item) => engine.length(item.seq));
      try {
        engine.decode(items);
        // Logits copied aside before this decode (while another sequence rewound, say) are
        // stale now: the next step must read the fresh ones.
        for (const s of owners) s.dropSavedLogits();
        return;
      } catch (err) {
        if (!(err instanceof EngineError) || err.code !== "context-full") throw err;
        for (let i = 0; i < items.length; i++) {
          if (engine.length(items[i]!.seq) > before[i]!) engine.truncate(items[i]!.seq, before[i]!);
        }
        let largest = 0;
        for (let i = 1; i < items.length; i++) {
          if (before[i]! > before[largest]!) largest = i;
        }
        this.finishFull(owners[largest]!);
        items.splice(largest, 1);
        owners.splice(largest, 1);
      }
    }
  }

  /** Ends a sequence whose context is full; a region that closed in its last token is dropped. */
  private finishFull(s: SequenceState): void {
    s.takeClosedRegion();
    s.finish("context-full");
  }

  /**
   * Ends one sequence whose own work failed. In a long-lived loop the requests belong to
   * different clients, so the sequence ends with reason "error" and the others go on; a
   * one-off generation ends with the error, as before.
   */
  private fail(s: SequenceState, err: unknown): void {
    if (!this.isolate) throw err;
    s.takeClosedRegion();
    s.dropOffload();
    s.finish("error", err instanceof Error ? err.message : String(err));
  }

  /** The oldest queued event of the first of `seqs` that has one (sequences in order, as
   * before). A plain loop over this in run(), not a `yield*` of a generator: in an async
   * generator that would wrap every event in extra promises. */
  private nextEvent(seqs: readonly SequenceState[]): DecodeEvent | undefined {
    for (const s of seqs) {
      const ev = s.nextEvent();
      if (ev) return ev;
    }
    return undefined;
  }

  /** Evaluates each prompt (reusing a matching KV prefix when asked) so logits are ready. */
  private prefill(seqs: SequenceState[], requests: readonly GenerationRequest[]): void {
    const engine = this.engine;
    const items: Array<{ seq: number; tokens: number[] }> = [];
    const owners: SequenceState[] = [];
    for (let i = 0; i < seqs.length; i++) {
      const s = seqs[i]!;
      const req = requests[i]!;
      try {
        const promptTokens =
          req.promptTokens ?? engine.tokenize(req.prompt, { addSpecial: true, parseSpecial: true });
        if (promptTokens.length === 0) throw new Error("the prompt is empty");
        const cached = kvOf(engine, s.seq);
        let keep = 0;
        if (
          req.reusePrefix &&
          sameDirections(kvVectorOf(engine).get(s.seq) ?? null, engine.controlVectorOf(s.seq))
        ) {
          while (
            keep < cached.length &&
            keep < promptTokens.length &&
            cached[keep] === promptTokens[keep]
          )
            keep++;
          // At least one token must be decoded to get fresh logits.
          if (keep === promptTokens.length) keep--;
        }
        engine.truncate(s.seq, keep);
        kvVectorOf(engine).set(s.seq, engine.controlVectorOf(s.seq));
        cached.length = keep;
        const holds = keep + engine.freeCells(s.seq);
        if (promptTokens.length >= holds) {
          throw new Error(
            `the prompt has ${promptTokens.length} tokens but the context holds ${holds}`,
          );
        }
        s.setPrompt(promptTokens);
        items.push({ seq: s.seq, tokens: promptTokens.slice(keep) });
        owners.push(s);
      } catch (err) {
        this.fail(s, err);
      }
    }
    this.decodeFitting(items, owners);
    for (const s of owners) {
      const cached = kvOf(engine, s.seq);
      cached.length = 0;
      cached.push(...s.tokens);
    }
  }

  private runSetup(s: SequenceState, source: string): void {
    const logits = s.peekSavedLogits() ?? this.engine.logits(s.seq);
    const outcome = s.runOnLogits("setup", logits, () => s.vm.run(source));
    s.recordVm("setup", "c", source, outcome);
    if (outcome.stdout)
      s.emit({ type: "hook-log", seq: s.seq, hook: "main", step: 0, text: outcome.stdout });
    this.performRewind(s);
  }

  /**
   * Steps 1–3 for one sequence: returns the tokens to decode, or null when it finished or
   * rewound. With the overlap on, what need not come before the decode (hooks that cannot
   * change the sampling, the token's statistics) is left in `late` for settle(), which
   * places its events where they would have come.
   */
  private chooseNext(s: SequenceState, late: StepWork[]): Sampled | null {
    const engine = this.engine;
    if (s.sampled >= s.options.maxTokens) {
      s.finish("max-tokens");
      return null;
    }
    // Its own KV stream (or the shared buffer) is full: nothing more can be decoded.
    if (engine.freeCells(s.seq) < 1) {
      s.finish("context-full");
      return null;
    }
    const source = this.takeLogits(s);
    const state = s.openStepLogits(source);
    const stats = wantsStats(s);
    const hooksLate = this.overlap && s.hasHooks && s.hooksSamplingNeutral();
    // Only vocabulary-wide work is worth moving past the decode's launch: the asynchronous
    // decode costs ~0.03 ms more than a synchronous one, and without the work nothing is won.
    const moves = hooksLate || (this.overlap && stats);
    if (!hooksLate) {
      this.runHooks(s);
      if (s.rewindRequested) {
        s.closeLogits();
        this.performRewind(s);
        return null;
      }
    }
    const work: StepWork = {
      s,
      mark: s.eventMark(),
      token: -1,
      hooksPending: hooksLate,
      counted: false,
      event: undefined,
      filled: false,
    };
    // The generated tokens, only built when a repetition penalty needs them.
    const penalty = s.options.sampling.repetitionPenalty ?? 1;
    const history =
      penalty !== 1 && s.tokens.length > s.promptLength
        ? s.tokens.slice(s.promptLength)
        : undefined;
    // The statistics pass leaves the block maxima, from which greedy's argmax needs no pass of
    // its own: computed first, they serve both (unless they wait for the decode).
    if (stats && !moves) state.entropy();
    let token: number;
    try {
      // Plain greedy needs no copy of the logits into the sampler: the state's argmax is it;
      // every other draw runs in the state's buffers (bias, bans and penalty undone after it).
      token = s.sampler.plainGreedy ? state.argmax() : state.sampleWith(s.sampler, history);
      if (token < 0) throw new Error("every token is masked: nothing left to sample");
    } catch (err) {
      // Hooks read the logits as they were before this.
      this.runLateHooks(work);
      // Everything masked by VM code: fall back to the model's own choice rather than stall.
      s.emit({
        type: "hook-error",
        seq: s.seq,
        hook: "sampler",
        step: s.step,
        message: (err as Error).message,
      });
      state.load(source);
      token = s.sampler.sample(state.logits, history);
    }
    work.token = token;
    if (!hooksLate) {
      s.closeLogits();
      this.count(work);
    }
    const step = s.step - (work.counted ? 1 : 0);
    if (engine.isEndOfGeneration(token) || s.options.stopTokens?.has(token)) {
      this.settle(work);
      s.finish("eos");
      return null;
    }
    let text = engine.tokenText(token);
    const before = s.scanner.offset;
    const events = s.scanner.feed(text);
    let tokens = [token];
    const duplicate = events.find((e) => e.type === "result-duplicate");
    if (duplicate && duplicate.type === "result-duplicate") {
      // Dropping it rewrites the sequence: what this step does late must happen first.
      this.settle(work);
      if (this.dropDuplicate(s, duplicate.start, token, text)) return null;
    }
    for (const ev of events) {
      if (ev.type === "region-end" && s.closedRegion === null) {
        s.markClosed(ev.region);
        // The token ran past the region's end: keep only the part up to it, re-tokenized.
        const end = ev.region.end;
        if (end < s.scanner.offset) {
          s.scanner.rewind(end);
          text = text.slice(0, end - before);
          tokens = continuationTokens(engine, text);
        }
      }
    }
    work.event = {
      type: "token",
      seq: s.seq,
      step,
      id: token,
      text,
      probability: NaN,
      entropy: NaN,
      top: undefined,
    };
    s.emit(work.event);
    const kept = before + text.length;
    for (const ev of events) {
      // Events about text past a region's end describe characters that were dropped.
      if (ev.type === "region-start" && ev.start < kept) {
        s.emit({
          type: "region-start",
          seq: s.seq,
          language: ev.language,
          syntax: ev.syntax,
          offset: ev.start,
        });
      } else if (ev.type === "region-end" && ev.region === s.closedRegion) {
        s.emit({ type: "region-end", seq: s.seq, region: ev.region });
      }
    }
    if (!s.options.inject) s.takeClosedRegion();
    const stop = this.findStop(s, before);
    if (stop >= 0) {
      this.settle(work);
      s.scanner.rewind(stop);
      s.takeClosedRegion();
      s.finish("stop");
      return null;
    }
    if (moves) late.push(work);
    else this.settle(work);
    return { seq: s.seq, tokens, offset: before };
  }

  /** Runs the step's hooks that were left for later, their events before the step's own. */
  private runLateHooks(work: StepWork): void {
    if (!work.hooksPending) return;
    work.hooksPending = false;
    work.s.emittingAt(work.mark, () => this.runHooks(work.s));
  }

  /** Counts the step's token as sampled (after its hooks: they see the step they ran at). */
  private count(work: StepWork): void {
    if (work.counted) return;
    work.counted = true;
    work.s.countSampled();
  }

  /** Does what the step left for later: hooks, counting, and the token event's statistics
   * once the event exists (called again after it was made when the step settled early). */
  private settle(work: StepWork): void {
    const s = work.s;
    this.runLateHooks(work);
    s.closeLogits();
    this.count(work);
    const event = work.event;
    if (!event || work.filled) return;
    work.filled = true;
    if (wantsStats(s)) {
      event.probability = s.logitState.probability(work.token);
      event.entropy = s.logitState.entropy();
    }
    event.top = this.topAlternatives(s);
  }

  /** settle() for each sequence's late work; the failures are returned, for fail() once the
   * decode is done (ending a sequence may touch the engine). */
  private settleAll(late: readonly StepWork[]): Array<{ s: SequenceState; err: unknown }> {
    const failed: Array<{ s: SequenceState; err: unknown }> = [];
    for (const work of late) {
      try {
        this.settle(work);
      } catch (err) {
        failed.push({ s: work.s, err });
      }
    }
    return failed;
  }

  /** The most likely tokens of the distribution just sampled from, when the request asked. */
  private topAlternatives(s: SequenceState): TokenEvent["top"] {
    const n = Math.min(s.options.topLogprobs ?? 0, TOP_K_CAPACITY, this.engine.capabilities.nVocab);
    if (n <= 0) return undefined;
    const top: NonNullable<TokenEvent["top"]> = [];
    for (let rank = 0; rank < n; rank++) {
      const id = s.logitState.topToken(rank);
      top.push({ id, text: this.engine.tokenText(id), probability: s.logitState.probability(id) });
    }
    return top;
  }

  /**
   * The model began writing ` = VM[` again right after an injected result. Erase what it wrote
   * of that prefix (it is at most a few tokens), and forbid the token that started it at the next
   * step, so the result appears once. Returns false when the prefix does not start on a token
   * boundary (then it is left alone).
   */
  private dropDuplicate(s: SequenceState, start: number, token: number, text: string): boolean {
    const tokenStart = s.scanner.offset - text.length;
    // The prefix began in an earlier token (at `position`) or in this one, not yet appended.
    const position = s.positionAtText(start);
    const earlier = position < s.tokens.length;
    if ((earlier ? s.textOffsetAt(position) : tokenStart) !== start) return false;
    const firstToken = earlier ? s.tokens[position]! : token;
    s.scanner.rewind(start);
    this.truncateAndRedecode(s, position);
    s.forbidAtNextStep(firstToken);
    s.emit({
      type: "hook-log",
      seq: s.seq,
      hook: "runtime",
      step: s.step,
      text: "dropped a repeated ' = VM[' after an injected result\n",
    });
    return true;
  }

  /** Where a stop string first occurs in the text; only text that can contain a new occurrence
   * (from just before this token's start) is searched, so each token costs O(token + stop). */
  private findStop(s: SequenceState, tokenStart: number): number {
    const text = s.text;
    let at = -1;
    for (const stop of s.options.stop) {
      const i = text.indexOf(stop, Math.max(0, tokenStart - stop.length + 1));
      if (i >= 0 && (at < 0 || i < at)) at = i;
    }
    return at;
  }

  /** Records tokens just decoded into a sequence's KV cache (for prefix reuse). */
  private cacheTokens(s: SequenceState, tokens: readonly number[]): void {
    kvOf(this.engine, s.seq).push(...tokens);
  }

  private applySteering(owners: SequenceState[]): void {
    for (const s of owners) {
      const pending = s.takeSteering();
      if (pending.length === 0) continue;
      for (const [layer, add] of pending) this.engine.steer(layer, { add }, { seq: s.seq });
    }
  }

  private runHooks(s: SequenceState): void {
    if (!s.hasHooks) return;
    for (const name of s.hookNames()) {
      // An earlier hook of this step may have removed it.
      if (!s.consumeHookCall(name)) continue;
      const outcome = s.callHook(name);
      s.recordVm("hook", "c", `${name}(${s.step})`, outcome);
      if (outcome.stdout) {
        s.emit({
          type: "hook-log",
          seq: s.seq,
          hook: name,
          step: s.step,
          text: outcome.stdout,
        });
      }
      if (!outcome.ok) {
        s.removeHook(name);
        const where =
          outcome.error.line > 0 ? ` at ${outcome.error.line}:${outcome.error.column}` : "";
        s.emit({
          type: "hook-error",
          seq: s.seq,
          hook: name,
          step: s.step,
          message: `${outcome.error.message}${where}`,
        });
      }
      if (s.rewindRequested) break;
    }
  }

  /** Step 5 for every sequence whose last token closed a region. */
  private runClosedRegions(owners: SequenceState[]): void {
    const ran: RegionRun[] = [];
    for (const s of owners) {
      const region = s.takeClosedRegion();
      if (!region) continue;
      try {
        if (this.offload(s, region)) continue;
        const outcome = s.runOnLogits("region", this.engine.logits(s.seq), () =>
          this.execute(s, region),
        );
        ran.push({ s, region, outcome });
      } catch (err) {
        this.fail(s, err);
      }
    }
    this.inject(ran);
  }

  /** Starts a region on a VM worker when it cannot read the model; false: run it here. */
  private offload(s: SequenceState, region: Region): boolean {
    const runner = this.options.regionRunner;
    if (!runner) return false;
    const job = offloadJob(s, region);
    if (!job) return false;
    const deliver = s.startOffload(region);
    void runner.run(job).then((outcome) => {
      deliver(outcome);
      this.wakeLoop?.();
    });
    return true;
  }

  /** Injects the results that VM workers have sent back since the last step. */
  private injectOffloaded(seqs: readonly SequenceState[]): void {
    const ran: RegionRun[] = [];
    for (const s of seqs) {
      const back = s.takeOffloaded();
      if (!back || s.done) continue;
      s.ranElsewhere();
      ran.push({ s, ...back });
    }
    this.inject(ran);
  }

  /** Reports each region's outcome and evaluates its result into the KV cache (one batch). */
  private inject(ran: readonly RegionRun[]): void {
    // Called twice every step, nearly always with nothing to do: no arrays for that.
    if (ran.length === 0) return;
    const engine = this.engine;
    const items: Array<{ seq: number; tokens: number[] }> = [];
    const injected: Array<{ s: SequenceState; text: string; tokens: number[] }> = [];
    for (const { s, region, outcome } of ran) {
      s.recordVm("region", region.language, region.source, outcome);
      try {
        const text = formatInjection(region, outcome, { written: s.scanner.resultWritten() });
        const tokens = continuationTokens(engine, text);
        injected.push({ s, text, tokens });
        items.push({ seq: s.seq, tokens });
      } catch (err) {
        this.fail(s, err);
      }
    }
    if (items.length === 0) return;
    const t0 = performance.now();
    const owners = injected.map((i) => i.s);
    this.applySteering(owners);
    this.preserveLogits(owners);
    this.decodeFitting(items, owners);
    const decodeMs = performance.now() - t0;
    for (const { s, text, tokens } of injected) {
      if (s.done) continue;
      s.injected(text, tokens, decodeMs);
      this.cacheTokens(s, tokens);
      s.settleDeferredCheckpoints();
      try {
        this.performRewind(s);
      } catch (err) {
        this.fail(s, err);
      }
    }
  }

  private execute(s: SequenceState, region: Region): VmOutcome {
    switch (region.language) {
      case "c":
        return s.vm.run(region.source);
      case "calc":
        return runCalc(region.source);
      case "lisp":
        return s.runLisp(region.source);
    }
  }

  /**
   * Cuts the sequence back to its first `length` tokens (tokens, KV cache and the engine's view
   * of it), then decodes the last kept token again so fresh logits exist for the next sampling
   * step. Dropping a repeated result and rewinding both end this way.
   */
  private truncateAndRedecode(s: SequenceState, length: number): void {
    const engine = this.engine;
    s.truncate(length);
    const keep = length - 1;
    const last = s.tokens[keep]!;
    engine.truncate(s.seq, keep);
    kvOf(engine, s.seq).length = keep;
    this.preserveLogits([s]);
    engine.decode([{ seq: s.seq, tokens: [last] }]);
    s.dropSavedLogits();
    this.cacheTokens(s, [last]);
  }

  /** Carries out a rewind that VM code asked for: KV cache, text and scanner go back. */
  private performRewind(s: SequenceState): void {
    const cp = s.takeRewind();
    if (cp) this.truncateAndRedecode(s, cp.position);
  }
}
