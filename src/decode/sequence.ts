// The state of one sequence being generated: its tokens and text, region scanner, VM sessions,
// hooks, checkpoints and pending interventions. The loop (loop.ts) drives it step by step.
import { settleLogitReaders } from "../engine/llama/logit-readers.js";
import type { Engine } from "../engine/types.js";
import { VmSession } from "../vm/session.js";
import type { VmOutcome } from "../vm/result.js";
import type { VmProfileName } from "../vm/limits.js";
import { RegionScanner, type RegionSyntax, type Region } from "./scanner.js";
import { Sampler, type SamplerOptions } from "./sampler.js";
import { LogitState, MASKED_LOGIT, type LogitEdit } from "./logit-state.js";
import { bindIntrinsics, LiveBinding, type IntrinsicHost } from "./intrinsics.js";
import { SAMPLING_NEUTRAL_INTRINSICS } from "./intrinsic-table.js";
import type { DecodeEvent, DoneReason, GenerationStats } from "./events.js";
import { LispSession } from "../lisp/session.js";
import { checkFits, scaledDirections, type ControlVector } from "../steer/control-vector.js";
import type { HookPoint } from "../steer/hook-points.js";
import { activationRow, l2 } from "../steer/intrinsics.js";
import { Spares } from "../spares.js";

export interface Checkpoint {
  id: number;
  /** Number of tokens in the context at the checkpoint. */
  position: number;
  /** Length of the generated text at the checkpoint. */
  textLength: number;
  scanner: ReturnType<RegionScanner["snapshot"]>;
}

/** Most rewinds one generation may perform: a program that always rewinds still terminates. */
export const MAX_REWINDS = 32;

export interface SequenceOptions {
  seq: number;
  maxTokens: number;
  sampling: SamplerOptions;
  stop: readonly string[];
  /** Tokens that end the generation like end-of-generation tokens. */
  stopTokens?: ReadonlySet<number>;
  syntaxes?: readonly RegionSyntax[];
  inject: boolean;
  /** A VM session that outlives this generation (chat); made with `createLiveVm`. */
  live?: LiveVm;
  /** Control vectors cvec_load can name. */
  vectors?: ReadonlyMap<string, ControlVector>;
  /** A control vector (layer → scaled direction) applied for the whole generation, prompt included. */
  controlVector?: ReadonlyMap<number, Float32Array>;
  /** Sandbox profile of the VM session made when `live` is not given. */
  profile?: VmProfileName;
  /** Alternatives with probabilities on each token event (0: none). */
  topLogprobs?: number;
  /** Token events carry the token's probability and the entropy (else NaN). */
  tokenStats: boolean;
}

/** A VM session bound to a sequence across generations. */
export interface LiveVm {
  session: VmSession;
  binding: LiveBinding;
}

export function createLiveVm(engine: Engine, seq: number, profile?: VmProfileName): LiveVm {
  const binding = new LiveBinding(engine, seq);
  return { session: new VmSession({ intrinsics: bindIntrinsics(binding), profile }), binding };
}

/** Where VM code is running, which decides what a checkpoint or logit edit means. */
export type VmPhase = "idle" | "setup" | "hook" | "region";

/** What takeSteering returns when nothing is pending (every step, usually): no allocation. */
const NO_STEERING: ReadonlyArray<[number, Float32Array]> = [];

/** The logit states of finished sequences, by vocabulary size, for new sequences to take. A
 * state holds a few MB of WebAssembly memory with its own instance of the SIMD kernels: a fresh
 * one per request faults its pages in during the first steps and hands V8 a new call target
 * for every kernel, which makes it throw away its optimized code of the passes that call them. */
const spareLogitStates = new Spares<number, LogitState>();

function takeLogitState(vocabSize: number): LogitState {
  const state = spareLogitStates.take(vocabSize);
  if (!state) return new LogitState(vocabSize);
  state.reset();
  return state;
}

function giveBackLogitState(state: LogitState): void {
  spareLogitStates.give(state.vocabSize, state);
}

/** A region running on a VM worker, and its outcome once it is back. */
interface Offload {
  region: Region;
  outcome: VmOutcome | null;
}

/**
 * One sequence's generation state. Its invariants, kept by the methods below: the tokens are
 * the prompt followed by generated and injected tokens, each of those with the text offset at
 * which it starts; hooks have a positive number of calls left; events are queued in order and
 * carry this sequence's id.
 */
export class SequenceState implements IntrinsicHost {
  readonly seq: number;
  /** Made on first use: most requests run no VM code, and a session costs ~1 ms to make. */
  private liveVm: LiveVm | undefined;
  private lisp: LispSession | undefined;
  readonly scanner: RegionScanner;
  readonly sampler: Sampler;
  readonly logitState: LogitState;
  /** Every token in the KV cache of this sequence, in order. */
  private readonly context: number[] = [];
  private promptTokens = 0;
  /** Text offset at which each generated or injected token starts (index = position − promptLength). */
  private readonly offsets: number[] = [];
  private sampledTokens = 0;
  private finished = false;
  private phase: VmPhase = "idle";
  /** Whether VM code may read the logits now (during hooks, setup and region programs). */
  private logitsReady = false;
  /** Edits VM code made outside a sampling step, replayed at the next one. */
  private pendingEdits: LogitEdit[] = [];
  /** Hook functions and the calls each has left (always > 0). */
  private readonly hooks = new Map<string, number>();
  /** The keys of `hooks` in order, made when first asked for after they changed. */
  private hookOrder: string[] | null = null;
  private readonly checkpoints = new Map<number, Checkpoint>();
  /** Checkpoints taken during a region program: they point past the injected result. */
  private deferredCheckpoints: number[] = [];
  private nextCheckpointId = 1;
  private pendingRewind: number | null = null;
  private memo = "";
  private lastMemo = "";
  /** Activation additions VM code asked for, per layer, applied at the next decode. */
  private readonly steering = new Map<number, Float32Array>();
  private readonly queue: DecodeEvent[] = [];
  private readonly stats: GenerationStats = {
    promptTokens: 0,
    sampledTokens: 0,
    injectedTokens: 0,
    vmCalls: 0,
    hookCalls: 0,
    rewinds: 0,
    totalMs: 0,
    tokensPerSecond: 0,
  };
  /** This sequence's next-token logits, copied aside when a decode of other sequences was about
   * to overwrite llama.cpp's buffer (injections and rewinds decode a subset of the sequences). */
  private savedLogits: Float32Array | null = null;
  private stash: Float32Array | null = null;

  /** Copies the engine's current logits for this sequence aside. */
  saveLogits(source: Float32Array): void {
    // A logit state may still point at the stash from an earlier step (a deferred copy).
    settleLogitReaders();
    this.stash ??= new Float32Array(source.length);
    this.stash.set(source);
    this.savedLogits = this.stash;
  }

  /** Whether logits were copied aside and not yet taken or dropped. */
  get hasSavedLogits(): boolean {
    return this.savedLogits !== null;
  }

  /** The logits copied aside, if any, which are then gone (the next step uses them once). */
  takeSavedLogits(): Float32Array | null {
    const saved = this.savedLogits;
    this.savedLogits = null;
    return saved;
  }

  /** The logits copied aside, if any, left in place (setup code reads them; sampling follows). */
  peekSavedLogits(): Float32Array | null {
    return this.savedLogits;
  }

  /** Drops logits copied aside: a decode of this sequence made them stale. */
  dropSavedLogits(): void {
    this.savedLogits = null;
  }

  /** Tokens of the prompt at the start of `tokens`. */
  get promptLength(): number {
    return this.promptTokens;
  }

  /** Every token in the KV cache of this sequence, in order: the prompt, then generated and
   * injected tokens. */
  get tokens(): readonly number[] {
    return this.context;
  }

  /** Appends the prompt's tokens; once, before anything is generated. */
  setPrompt(tokens: readonly number[]): void {
    if (this.context.length > 0) throw new Error("the prompt is set once, before generation");
    this.context.push(...tokens);
    this.promptTokens = tokens.length;
    this.stats.promptTokens = tokens.length;
  }

  /** Appends decoded tokens (generated, or a re-tokenized piece of one) whose text starts at
   * `textOffset`. */
  append(tokens: readonly number[], textOffset: number): void {
    for (const token of tokens) {
      this.context.push(token);
      this.offsets.push(textOffset);
    }
  }

  /** Cuts the sequence back to its first `length` tokens (never into the prompt). */
  truncate(length: number): void {
    if (!(length >= this.promptTokens && length <= this.context.length))
      throw new RangeError(
        `cannot cut sequence ${this.seq} to ${length} tokens (prompt ${this.promptTokens}, now ${this.context.length})`,
      );
    this.context.length = length;
    this.offsets.length = length - this.promptTokens;
  }

  /** The position of the first token after the prompt whose text starts at or after
   * `textOffset` (tokens.length when none does). */
  positionAtText(textOffset: number): number {
    let k = this.offsets.length;
    while (k > 0 && this.offsets[k - 1]! >= textOffset) k--;
    return this.promptTokens + k;
  }

  /** The text offset at which the token at `position` (after the prompt) starts. */
  textOffsetAt(position: number): number {
    const offset = this.offsets[position - this.promptTokens];
    if (offset === undefined) throw new RangeError(`no generated token at position ${position}`);
    return offset;
  }

  /** Records a result injected after the text so far: its text goes to the scanner, its tokens
   * (decoded already) to the sequence, and an `injection` event is queued. */
  injected(text: string, tokens: readonly number[], decodeMs: number): void {
    const at = this.scanner.offset;
    this.scanner.inject(text);
    this.append(tokens, at);
    this.stats.injectedTokens += tokens.length;
    this.emit({ type: "injection", seq: this.seq, text, tokens: [...tokens], decodeMs });
  }

  // ---- events ----

  /** Queues an event of this sequence. */
  emit(event: DecodeEvent): void {
    if (event.seq !== this.seq)
      throw new Error(`event of sequence ${event.seq} queued on sequence ${this.seq}`);
    this.queue.push(event);
  }

  /** Where the next queued event goes; see emittingAt. */
  eventMark(): number {
    return this.queue.length;
  }

  /** Runs `fn` with the events it queues placed at `mark`, before those queued since: work the
   * loop does late (hooks run while the decode runs) keeps its events in their usual place.
   * Nothing may be dequeued between taking the mark and this. */
  emittingAt<T>(mark: number, fn: () => T): T {
    const later = this.queue.splice(mark);
    try {
      return fn();
    } finally {
      this.queue.push(...later);
    }
  }

  /** The oldest queued event, which is then no longer queued; undefined when none is. */
  nextEvent(): DecodeEvent | undefined {
    return this.queue.shift();
  }

  // ---- hooks and steering, as the loop consumes them ----

  /** Whether any hook is set. */
  get hasHooks(): boolean {
    return this.hooks.size > 0;
  }

  /** The hooks set now, in the order they were set (a snapshot: hooks may change hooks; made
   * again only after they did, not at every step). */
  hookNames(): readonly string[] {
    return (this.hookOrder ??= [...this.hooks.keys()]);
  }

  /** The size of the session's imported intrinsics when they were last judged, and the verdict. */
  private neutralChecked = { imports: -1, neutral: false };

  /**
   * Whether the hooks set now cannot change the token this step samples, so they may run after
   * it (the loop overlaps them with the next decode): every hook was compiled for the current
   * definitions, and no module of the session imported an intrinsic that writes the logits or
   * touches the context or the engine (src/decode/intrinsic-table.ts, `effect`).
   */
  hooksSamplingNeutral(): boolean {
    const session = this.liveVm?.session;
    if (!session) return !this.hasHooks;
    for (const name of this.hookNames()) if (!session.hasCompiledCall(name)) return false;
    const imported = session.importedIntrinsics;
    if (this.neutralChecked.imports !== imported.size) {
      let neutral = true;
      for (const name of imported) if (!SAMPLING_NEUTRAL_INTRINSICS.has(name)) neutral = false;
      this.neutralChecked = { imports: imported.size, neutral };
    }
    return this.neutralChecked.neutral;
  }

  /** Calls hook `name` with the current step in the sequence's VM session. */
  callHook(name: string): VmOutcome {
    const before = this.phase;
    this.phase = "hook";
    try {
      return this.vm.call(name, [this.sampledTokens]);
    } finally {
      this.phase = before;
    }
  }

  /** Takes one call of hook `name` before it runs: false when it is no longer set; a hook whose
   * last call this is is removed. */
  consumeHookCall(name: string): boolean {
    const left = this.hooks.get(name);
    if (left === undefined) return false;
    if (left <= 1) this.removeHook(name);
    else this.hooks.set(name, left - 1);
    this.stats.hookCalls++;
    return true;
  }

  /** Removes a hook (it failed). */
  removeHook(name: string): void {
    if (this.hooks.delete(name)) this.hookOrder = null;
  }

  /** The activation additions asked for since the last decode, which are then cleared. */
  takeSteering(): ReadonlyArray<[number, Float32Array]> {
    if (this.steering.size === 0) return NO_STEERING;
    const pending = [...this.steering];
    this.steering.clear();
    return pending;
  }

  /** Runs a Lisp region in this sequence's Lisp session (made on first use). */
  runLisp(source: string): VmOutcome {
    this.lisp ??= new LispSession();
    return this.lisp.run(source);
  }

  /** Tokens sampled so far; also the index of the next sampling step. */
  get sampled(): number {
    return this.sampledTokens;
  }

  /** The current sampling step (what hook_step and hook events report). */
  get step(): number {
    return this.sampledTokens;
  }

  /** Counts a sampled token; returns the step it was sampled at. */
  countSampled(): number {
    return this.sampledTokens++;
  }

  /** Whether the sequence has finished (a `done` event is queued). */
  get done(): boolean {
    return this.finished;
  }

  /** A region that closed in the token just decoded; handled after the batch decode. */
  private pendingRegion: Region | null = null;

  /** The region that closed in the token just decoded, run after the batch decode; null if none. */
  get closedRegion(): Region | null {
    return this.pendingRegion;
  }

  /** Records a region that closed in this token; the first one of a token wins. */
  markClosed(region: Region): void {
    this.pendingRegion ??= region;
  }

  /** The closed region, which is then no longer pending. */
  takeClosedRegion(): Region | null {
    const region = this.pendingRegion;
    this.pendingRegion = null;
    return region;
  }
  /** A region running on a VM worker: the sequence samples nothing until its outcome is in. */
  private offload: Offload | null = null;

  /** Whether a region of this sequence runs on a VM worker (its outcome may be back). */
  get offloaded(): boolean {
    return this.offload !== null;
  }

  /** Whether a region of this sequence runs on a VM worker and its outcome is not back. */
  get waitingForWorker(): boolean {
    return this.offload !== null && this.offload.outcome === null;
  }

  /** Marks `region` as running on a VM worker; returns what delivers its outcome (ignored
   * when the sequence has dropped the region meanwhile). */
  startOffload(region: Region): (outcome: VmOutcome) => void {
    const pending: Offload = { region, outcome: null };
    this.offload = pending;
    return (outcome) => {
      pending.outcome = outcome;
    };
  }

  /** The offloaded region and its outcome once it is back (then no longer pending); null
   * while none is back. */
  takeOffloaded(): { region: Region; outcome: VmOutcome } | null {
    const pending = this.offload;
    if (!pending || pending.outcome === null) return null;
    this.offload = null;
    return { region: pending.region, outcome: pending.outcome };
  }

  /** Forgets an offloaded region (the sequence failed); its outcome will be ignored. */
  dropOffload(): void {
    this.offload = null;
  }

  private readonly startedAt = performance.now();

  constructor(
    readonly engine: Engine,
    readonly options: SequenceOptions,
  ) {
    this.seq = options.seq;
    if (options.live) {
      this.liveVm = options.live;
      options.live.binding.target = this;
    }
    this.scanner = new RegionScanner({ syntaxes: options.syntaxes });
    this.sampler = new Sampler(engine.capabilities.nVocab, options.sampling);
    this.logitState = takeLogitState(engine.capabilities.nVocab);
    if (options.controlVector) {
      this.vectorBefore = engine.controlVectorOf(this.seq);
      engine.setControlVector(this.seq, options.controlVector);
    }
  }

  get text(): string {
    return this.scanner.text;
  }

  /** The sequence's VM session (the request's own, or `options.live`), bound to this sequence. */
  get live(): LiveVm {
    if (!this.liveVm) {
      this.liveVm = createLiveVm(this.engine, this.seq, this.options.profile);
      if (!this.finished) this.liveVm.binding.target = this;
    }
    return this.liveVm;
  }

  get vm(): VmSession {
    return this.live.session;
  }

  /** Whether VM code of this sequence defined a function `name` (no session is made to ask). */
  definesFunction(name: string): boolean {
    return this.liveVm?.session.hasFunction(name) ?? false;
  }

  // ---- IntrinsicHost ----
  logits(): LogitState {
    if (!this.logitsReady) throw new Error("no next-token logits are available here");
    return this.logitState;
  }
  contextTokens(): readonly number[] {
    return this.context;
  }
  hookSet(fn: string, steps: number): void {
    if (steps <= 0) this.removeHook(fn);
    else {
      if (!this.hooks.has(fn)) this.hookOrder = null;
      this.hooks.set(fn, steps);
    }
  }
  hookStep(): number {
    return this.step;
  }
  checkpoint(): number {
    const id = this.nextCheckpointId++;
    this.checkpoints.set(id, this.captureCheckpoint(id));
    if (this.phase === "region") this.deferredCheckpoints.push(id);
    return id;
  }
  private captureCheckpoint(id: number): Checkpoint {
    return {
      id,
      position: this.context.length,
      textLength: this.scanner.offset,
      scanner: this.scanner.snapshot(),
    };
  }
  requestRewind(id: number): void {
    if (!this.checkpoints.has(id)) throw new RangeError(`vm_rewind: no checkpoint ${id}`);
    if (this.stats.rewinds >= MAX_REWINDS) {
      throw new Error(`vm_rewind: rewind limit reached (${MAX_REWINDS} per generation)`);
    }
    this.pendingRewind = id;
  }
  setMemo(text: string): void {
    this.memo = text;
  }
  previousMemo(): string {
    return this.lastMemo;
  }
  addActivation(layer: number, dim: number, delta: number): void {
    let v = this.steering.get(layer);
    if (!v) this.steering.set(layer, (v = new Float32Array(this.engine.capabilities.nEmbd)));
    v[dim] = v[dim]! + delta;
  }

  // ---- control vectors and lookahead (src/steer/intrinsics.ts) ----
  private readonly vectorNames: string[] = [];
  /** What VM code applied last (null: cleared), to skip repeated identical calls. */
  private appliedVector: { id: number; scale: number } | null | undefined = undefined;
  /** The sequence's vector before this generation changed it, restored when it ends
   * (undefined: nothing changed). */
  private vectorBefore: ReadonlyMap<number, Float32Array> | null | undefined = undefined;
  private lookaheadLogits: LogitState | undefined;

  loadVector(name: string): number {
    const cv = this.options.vectors?.get(name);
    if (!cv) {
      const known = [...(this.options.vectors?.keys() ?? [])];
      throw new Error(
        `cvec_load: no control vector named '${name}' (` +
          (known.length ? `known: ${known.join(", ")}` : "none given; pass --control-vector FILE") +
          ")",
      );
    }
    checkFits(cv, this.engine.capabilities, name);
    let i = this.vectorNames.indexOf(name);
    if (i < 0) i = this.vectorNames.push(name) - 1;
    return i + 1;
  }
  private touchVector(): void {
    if (this.vectorBefore === undefined) this.vectorBefore = this.engine.controlVectorOf(this.seq);
  }
  applyVector(id: number, scale: number): void {
    const name = this.vectorNames[id - 1];
    if (name === undefined)
      throw new RangeError(`cvec_apply: no control vector ${id} (use cvec_load)`);
    if (!Number.isFinite(scale)) throw new RangeError(`cvec_apply: bad scale ${scale}`);
    const a = this.appliedVector;
    if (a && a.id === id && a.scale === scale) return;
    this.touchVector();
    // Per-token changes are cheap: the engine rewrites llama.cpp's vector in place.
    const directions = scaledDirections(this.options.vectors!.get(name)!, scale);
    this.engine.setControlVector(this.seq, directions);
    this.appliedVector = { id, scale };
  }
  clearVector(): void {
    if (this.appliedVector === null) return;
    this.touchVector();
    this.engine.setControlVector(this.seq, null);
    this.appliedVector = null;
  }
  lookahead(token: number, steps: number, score: "entropy" | HookPoint): number {
    const engine = this.engine;
    if (!Number.isInteger(steps) || steps < 1 || steps > 256)
      throw new RangeError(`vm_lookahead: steps ${steps} is outside 1..256`);
    this.lookaheadLogits ??= new LogitState(engine.capabilities.nVocab);
    const state = this.lookaheadLogits;
    const scores = engine.lookahead(this.seq, token, steps, (logits, pos) => {
      if (score !== "entropy") return l2(activationRow(engine, this.seq, score, pos));
      state.load(logits);
      return state.entropy();
    });
    return scores.reduce((a, b) => a + b, 0) / scores.length;
  }

  // ---- the logits VM code sees ----

  /** Starts a sampling step: loads the next-token logits, replays the edits VM code left for
   * this step, and opens them to hooks until closeLogits(). */
  openStepLogits(source: Float32Array): LogitState {
    this.logitState.load(source);
    this.logitsReady = true;
    if (this.pendingEdits.length > 0) {
      this.logitState.replay(this.pendingEdits);
      this.pendingEdits = [];
    }
    return this.logitState;
  }

  /** Ends VM access to this step's logits (sampling follows). */
  closeLogits(): void {
    this.logitsReady = false;
  }

  /** Runs setup or region code on the distribution `source`; the edits it makes apply at the
   * next sampling step (the logits it saw belong to a step that is already decided). */
  runOnLogits<T>(phase: "setup" | "region", source: Float32Array, fn: () => T): T {
    this.logitState.load(source);
    this.logitsReady = true;
    try {
      return this.inPhase(phase, fn);
    } finally {
      this.logitsReady = false;
      this.pendingEdits = [...this.logitState.edits];
    }
  }

  /** A region that ran elsewhere (a VM worker) made no logit edits: as after runOnLogits, none
   * are left for the next step. */
  ranElsewhere(): void {
    this.pendingEdits = [];
  }

  /** Forbids a token at the next sampling step, replacing any edits left for it. */
  forbidAtNextStep(token: number): void {
    this.pendingEdits = [{ op: "set", id: token, value: MASKED_LOGIT }];
  }

  // ---- checkpoints and rewind ----

  /** Whether VM code asked for a rewind that has not been carried out. */
  get rewindRequested(): boolean {
    return this.pendingRewind !== null;
  }

  /** Checkpoints taken during a region program are re-taken once its result is injected. */
  settleDeferredCheckpoints(): void {
    for (const id of this.deferredCheckpoints) this.checkpoints.set(id, this.captureCheckpoint(id));
    this.deferredCheckpoints = [];
  }

  /**
   * Takes the requested rewind (null when none) and restores the text side: the scanner goes
   * back to the checkpoint, edits left for the next step are dropped, the memo moves to the new
   * timeline and a `rewind` event is queued. The caller cuts the tokens (truncate) and the KV
   * cache back to `position`.
   */
  takeRewind(): Checkpoint | null {
    const id = this.pendingRewind;
    if (id === null) return null;
    this.pendingRewind = null;
    const cp = this.checkpoints.get(id)!;
    const erased = this.text.slice(cp.textLength);
    this.scanner.restore(cp.scanner);
    this.pendingEdits = [];
    this.stats.rewinds++;
    this.lastMemo = this.memo;
    this.emit({
      type: "rewind",
      seq: this.seq,
      checkpoint: id,
      erased,
      memo: this.memo,
      position: cp.position,
    });
    this.memo = "";
    return cp;
  }

  /** Runs `fn` with the VM phase set, so intrinsics know what a checkpoint means. */
  inPhase<T>(phase: VmPhase, fn: () => T): T {
    const before = this.phase;
    this.phase = phase;
    try {
      return fn();
    } finally {
      this.phase = before;
    }
  }

  finish(reason: DoneReason, error?: string): void {
    if (this.finished) return;
    this.finished = true;
    // Nothing reads this sequence's logits after it ends (its VM binding lets go just below).
    giveBackLogitState(this.logitState);
    if (this.liveVm) this.liveVm.binding.target = null;
    // A session this sequence made for itself ends with it (one given in `live` lives on).
    if (this.liveVm && this.liveVm !== this.options.live) this.liveVm.session.dispose();
    if (this.vectorBefore !== undefined) {
      this.engine.setControlVector(this.seq, this.vectorBefore);
      this.vectorBefore = undefined;
    }
    const totalMs = performance.now() - this.startedAt;
    this.stats.totalMs = totalMs;
    this.stats.sampledTokens = this.sampledTokens;
    this.stats.tokensPerSecond = totalMs > 0 ? (this.sampledTokens * 1000) / totalMs : 0;
    this.emit({
      type: "done",
      seq: this.seq,
      reason,
      ...(error !== undefined ? { error } : {}),
      text: this.text,
      stats: { ...this.stats },
    });
  }

  recordVm(
    origin: "region" | "hook" | "setup",
    language: Region["language"],
    source: string,
    outcome: VmOutcome,
  ): void {
    this.stats.vmCalls++;
    this.emit({ type: "vm", seq: this.seq, origin, language, source, outcome });
  }
}
