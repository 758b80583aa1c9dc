// The engine interface the decode loop is written against: tokens, batched decode, zero-copy
// logits, rewind, and glass-box reads/writes of activations. docs/engine.md explains its contract.

export type Token = number;

/** Which activations the engine records while decoding (each costs time only while on). */
export interface ObserveOptions {
  /** Hidden state after every layer (`l_out-N`), every decoded position. */
  hidden?: boolean;
  /** Attention probabilities per layer and head (`kq_soft_max-N`), mapped to key positions. */
  attention?: boolean;
  /** K rows after and before RoPE, and V rows, per layer (`Kcur-N`, `Vcur-N`). */
  kv?: boolean;
  /** The final RMS-normed hidden state (`result_norm`), input of the output projection. */
  finalNorm?: boolean;
}

/** Which K/V row `Engine.kv` reads: keys after RoPE (as cached), keys before RoPE, values. */
export type KvKind = "k" | "k_pre_rope" | "v";

export interface Capabilities {
  nLayer: number;
  nHead: number;
  nHeadKv: number;
  headDim: number;
  nEmbd: number;
  /** Width of one K or V row: nHeadKv × headDim. */
  nEmbdKv: number;
  nVocab: number;
  /** Total context (KV cells) shared by all sequences. */
  contextSize: number;
  /** Largest number of tokens one llama_decode takes; longer inputs are split. */
  batchSize: number;
  maxSequences: number;
  threads: number;
  backend: "cpu" | "cuda" | "vulkan" | "metal";
  /** Glass-box reads this engine can serve (all false when created with glassBox: false). */
  reads: { hidden: boolean; attention: boolean; kv: boolean; finalNorm: boolean };
  /** Activation writes (steering) available. */
  steer: boolean;
  /** decodeAsync runs the forward pass on another thread (false: it decodes before returning,
   * as with the glass-box tap, whose callback must run on the JavaScript thread). */
  backgroundDecode: boolean;
}

export interface ModelInfo {
  path: string;
  architecture: string;
  /** llama.cpp's one-line description, e.g. "llama ?B all F32". */
  description: string;
  trainContextSize: number;
  /** The model's own chat template (GGUF tokenizer.chat_template), if it has one. */
  chatTemplate: string | undefined;
}

export interface SpecialTokens {
  bos: Token | undefined;
  eos: Token | undefined;
  /** End of turn (chat models), if the vocabulary has one. */
  eot: Token | undefined;
  nl: Token | undefined;
  /** Whether the model expects BOS at the start of a text (tokenize adds it with addSpecial). */
  addBos: boolean;
}

export interface ChatMessage {
  role: string;
  content: string;
}

export interface DecodeItem {
  seq: number;
  tokens: ArrayLike<Token>;
}

/** An edit of a layer's hidden state: add a vector (length nEmbd) or multiply by a scale. */
export type SteerEdit = { add: Float32Array } | { scale: number };

export interface SteerOptions {
  /** Only rows of this sequence are edited (default: every sequence in the decode). */
  seq?: number;
  /** Keep applying on every decode until clearSteering() (default: the next decode only). */
  persistent?: boolean;
}

export interface ObservationStats {
  /** Bytes held by recorded activations across all sequences. */
  bytes: number;
  budgetBytes: number;
  /** True once a recording was skipped because the budget was reached. */
  budgetExceeded: boolean;
}

/** Work an engine has done since it was opened (what evaluations compare modes by). */
export interface EngineCounters {
  /** llama_decode calls: one forward pass of the model over a batch of tokens. */
  forwardPasses: number;
  /** Tokens those passes evaluated (prompt, sampled and injected tokens alike). */
  tokensEvaluated: number;
}

export interface Engine {
  readonly model: ModelInfo;
  /** Present on engines that count their forward passes (the llama.cpp engine does). */
  readonly counters?: EngineCounters;
  readonly capabilities: Capabilities;
  readonly special: SpecialTokens;

  tokenize(text: string, options?: { addSpecial?: boolean; parseSpecial?: boolean }): Token[];
  detokenize(tokens: ArrayLike<Token>, options?: { renderSpecial?: boolean }): string;
  /** The raw bytes of one token (byte-fallback tokens may hold partial UTF-8 sequences). */
  tokenBytes(token: Token, options?: { renderSpecial?: boolean }): Uint8Array;
  /** The text of one token as it would be printed (special tokens rendered when asked). */
  tokenText(token: Token, options?: { renderSpecial?: boolean }): string;
  isEndOfGeneration(token: Token): boolean;
  isControl(token: Token): boolean;
  /** Renders a conversation with the model's chat template (or a named/explicit one). */
  renderChat(
    messages: ChatMessage[],
    options?: { addAssistant?: boolean; template?: string },
  ): string;
  /** GGUF metadata value as text, e.g. metadata("general.architecture"). */
  metadata(key: string): string | undefined;

  /**
   * Appends tokens to sequences and runs the model synchronously. Several items are decoded in
   * one llama_decode when they fit in a batch. Afterwards logits(seq) holds each item's
   * next-token logits.
   */
  decode(items: DecodeItem[]): void;
  /**
   * decode(), resolving when it is done; the forward pass may run on another thread meanwhile
   * (the llama.cpp engine does so for one batch without the glass-box tap). Until it settles,
   * calls that read or change the context (decode, logits, length, freeCells, truncate, reads
   * of activations, steering) throw EngineError "busy"; vocabulary calls (tokenize,
   * tokenText, isEndOfGeneration, …) stay allowed. Failures (context full, …) reject the
   * promise with the errors decode() throws.
   */
  decodeAsync(items: DecodeItem[]): Promise<void>;
  /**
   * Next-token logits of a sequence after the last decode that included it: a view onto
   * llama.cpp's buffer (no copy), valid until the next decode, truncate or dispose.
   */
  logits(seq: number): Float32Array;
  /** Number of positions decoded in a sequence (the next token's position). */
  length(seq: number): number;
  /**
   * KV cells a sequence can still take: what is left of its own stream when each sequence has
   * one (kvUnified false), else what is left of the shared context. A decode of more fails.
   */
  freeCells(seq: number): number;
  /** Rewinds a sequence to its first `length` positions (KV cache and recordings). */
  truncate(seq: number, length: number): void;

  /** Switches glass-box recording on or off (fields left out keep their state). */
  observe(options: ObserveOptions): void;
  observing(): Required<ObserveOptions>;
  /** Hidden state after `layer` at `pos` (length nEmbd), or undefined if not recorded. */
  hidden(seq: number, layer: number, pos: number): Float32Array | undefined;
  /** Final-norm hidden state at `pos` (length nEmbd), or undefined if not recorded. */
  finalNorm(seq: number, pos: number): Float32Array | undefined;
  /** Attention of the query at `qPos` over key positions 0..qPos (length qPos+1). */
  attention(seq: number, layer: number, head: number, qPos: number): Float32Array | undefined;
  /** Key (after RoPE: "k"; before: "k_pre_rope") or value row of one KV head at `pos`. */
  kv(
    seq: number,
    layer: number,
    headKv: number,
    pos: number,
    kind: KvKind,
  ): Float32Array | undefined;
  observationStats(): ObservationStats;

  /** Queues an edit of layer `layer`'s output hidden state (`l_out-N`) for the next decode(s). */
  steer(layer: number, edit: SteerEdit, options?: SteerOptions): void;
  clearSteering(): void;

  /**
   * Adds a control vector to one sequence's residual stream (`l_out-L` += direction, for each
   * layer L in the map, directions already scaled) on every decode until replaced or cleared
   * with null. A decode whose sequences all share one vector gets it through llama.cpp's own
   * control vector (rewritten in place, so per-token changes are cheap); a decode mixing
   * sequences with different vectors gets them through the graph tap, on each sequence's rows
   * only. `via: "tap"` forces the tap.
   */
  setControlVector(
    seq: number,
    layers: ReadonlyMap<number, Float32Array> | null,
    options?: { via?: "auto" | "tap" },
  ): void;
  /** The control vector set on a sequence (null when none). */
  controlVectorOf(seq: number): ReadonlyMap<number, Float32Array> | null;
  /**
   * Runs a scratch continuation of `seq`: decodes `first`, then greedy tokens, `steps` forward
   * passes in all, calling `score` on each pass's logits (and position); then removes it again.
   * The sequence's KV cache, recordings and every sequence's current logits are left exactly as
   * they were. Returns the scores in order.
   */
  lookahead(
    seq: number,
    first: Token,
    steps: number,
    score: (logits: Float32Array, pos: number) => number,
  ): number[];

  dispose(): void;
}
