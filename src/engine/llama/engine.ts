// The glass-box engine: one llama.cpp model and context driven through koffi, implementing the
// Engine interface (batched synchronous decode, zero-copy logits, rewind, observe and steer).
import { settleLogitReaders } from "./logit-readers.js";
import koffi from "koffi";
import { closeSync, existsSync, openSync, readSync, statSync } from "node:fs";
import { totalmem } from "node:os";
import { EngineError } from "../errors.js";
import {
  checkChatTemplate,
  isTemplateName,
  parseChatTemplate,
  renderChatTemplate,
} from "../chat-template.js";
import { defaultThreadCount } from "../threads.js";
import type {
  EngineCounters,
  Capabilities,
  KvKind,
  ChatMessage,
  DecodeItem,
  Engine,
  ModelInfo,
  ObservationStats,
  ObserveOptions,
  SpecialTokens,
  SteerEdit,
  SteerOptions,
  Token,
} from "../types.js";
import { LLAMA_FLASH_ATTN_TYPE_AUTO, LLAMA_FLASH_ATTN_TYPE_DISABLED } from "./abi.js";
import {
  claimLlamaLog,
  loadLlamaLibrary,
  takeRecentLog,
  type DeviceChoice,
  type LlamaApi,
} from "./library.js";
import { ObservationBudget, SequenceRecordings, type ModelShape } from "./recordings.js";
import { ControlVectors, type NativeVectorCounters } from "./control-vectors.js";
import { GraphTap, type BatchLayout, type CapturedTensor, type PendingSteer } from "./tap.js";

export interface LlamaEngineOptions {
  /** A local GGUF file (resolve `hf:` URIs first with resolveModelPath). */
  modelPath: string;
  /** "auto" (default) uses CUDA, Metal or Vulkan when usable, CPU otherwise. */
  device?: DeviceChoice;
  /** llama.cpp threads (default: defaultThreadCount(), from the real core count). */
  threads?: number;
  /** KV cells shared by all sequences (default: the model's training context, at most 4096);
   * a function gets the training context (0 when unknown) and answers the size. */
  contextSize?: number | ((trainContext: number) => number);
  /** Most tokens per llama_decode (default 512); longer inputs are split. */
  batchSize?: number;
  /** Number of sequences the context holds (default 1). */
  sequences?: number;
  /**
   * Install the eval callback that serves observe/steer (default true). false gives a context
   * without any callback: plain decoding speed, no glass-box reads.
   */
  glassBox?: boolean;
  /** Memory cap for recorded activations (default 256 MiB). */
  observeBudgetBytes?: number;
  /**
   * One KV buffer shared by all sequences (default true). false gives each sequence its own
   * stream of contextSize / sequences cells: faster batched decoding of many sequences, but
   * llama.cpp may then split and reorder a batch, so glass-box reads and steering are off.
   */
  kvUnified?: boolean;
  /**
   * Flash attention where llama.cpp supports it, as llama-server does by default (default false:
   * it changes the arithmetic slightly). Only without the glass box: attention probabilities exist
   * as a tensor only without flash attention. The server turns it on (docs/engine.md).
   */
  flashAttention?: boolean;
  /** A Jinja chat template that replaces the model's own (tokenizer.chat_template) in
   * model.chatTemplate and renderChat; it must parse (EngineError "chat-template"). */
  chatTemplate?: string;
}

const GGUF_MAGIC = "GGUF";

/** One token of a llama_batch: its sequence, and whether it produces logits. */
interface Row {
  seq: number;
  token: Token;
  output: boolean;
}
const NULL = 0n;

/** A decode checked and laid out: prefix rows, each item's last token, the steering it takes. */
interface DecodePlan {
  items: DecodeItem[];
  rows: Row[];
  finals: Row[];
  steering: PendingSteer[];
}

/** What one llama_decode's completion needs: each sequence's length after it, output rows. */
interface RunningBatch {
  next: Int32Array;
  outputs: number[];
  findVectorTensors: boolean;
}

function isNull(p: unknown): boolean {
  return p === null || p === undefined || p === 0n || p === 0;
}

/** Checks that a path is a readable GGUF file before llama.cpp sees it. */
function checkModelFile(path: string): void {
  if (!existsSync(path)) throw new EngineError("model-not-found", `model file not found: ${path}`);
  const stat = statSync(path);
  if (!stat.isFile()) throw new EngineError("model-not-found", `not a file: ${path}`);
  const head = Buffer.alloc(8);
  const fd = openSync(path, "r");
  let read: number;
  try {
    read = readSync(fd, head, 0, 8, 0);
  } finally {
    closeSync(fd);
  }
  if (read < 8 || head.toString("latin1", 0, 4) !== GGUF_MAGIC)
    throw new EngineError(
      "not-gguf",
      `not a GGUF model file: ${path} (starts with ${JSON.stringify(head.toString("latin1", 0, Math.min(read, 4)))}, expected "GGUF")`,
    );
}

function argmax(values: Float32Array): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}

function utf8(buf: Buffer, length: number): string {
  return buf.toString("utf8", 0, Math.max(0, Math.min(length, buf.length)));
}

/** Rough bookkeeping llama.cpp keeps per KV cell besides K and V (positions, sequence sets). */
const CELL_OVERHEAD_BYTES = 64;

/**
 * llama.cpp fails cleanly when a KV allocation is refused, but an absurd size can first spend
 * minutes initialising per-cell bookkeeping or get the process killed by the OOM killer when
 * overcommitted memory is touched. A context whose F16 KV cache alone exceeds the machine's
 * memory is therefore refused before llama.cpp sees it.
 */
function refuseImpossibleContext(contextSize: number, shape: ModelShape, path: string): void {
  const perCell = shape.nLayer * shape.nEmbdKv * 2 * 2 + CELL_OVERHEAD_BYTES;
  const needed = contextSize * perCell;
  const available = totalmem();
  if (needed > available) {
    const gib = (n: number) => (n / 2 ** 30).toFixed(1);
    throw new EngineError(
      "context-create",
      `cannot create a context of ${contextSize} tokens for ${path}: its KV cache needs about ` +
        `${gib(needed)} GiB, more than this machine's ${gib(available)} GiB of memory`,
    );
  }
}

export async function openLlamaEngine(options: LlamaEngineOptions): Promise<LlamaEngine> {
  checkModelFile(options.modelPath);
  if (options.chatTemplate !== undefined && !isTemplateName(options.chatTemplate))
    checkChatTemplate(options.chatTemplate, "the chat template");
  const lib = await loadLlamaLibrary(options.device ?? "auto");
  const api = lib.api;
  claimLlamaLog(api);
  const mp = api.llama_model_default_params();
  if (lib.backend === "cpu") mp.n_gpu_layers = 0;
  takeRecentLog();
  const model: bigint | null = await new Promise((resolve, reject) =>
    // Loading runs on a worker thread so the event loop (progress bars, servers) stays alive.
    api.llama_model_load_from_file.async(options.modelPath, mp, (err: unknown, res: bigint) =>
      err ? reject(err) : resolve(res),
    ),
  );
  if (isNull(model)) {
    const log = takeRecentLog();
    if (/unknown (model )?architecture/i.test(log))
      throw new EngineError(
        "unsupported-model",
        `unsupported model architecture in ${options.modelPath}: ${log}`,
      );
    throw new EngineError(
      "model-load",
      `cannot load model ${options.modelPath}: ${log || "llama.cpp returned no model"}`,
    );
  }
  try {
    return new LlamaEngine(api, model as bigint, options, lib.backend);
  } catch (err) {
    api.llama_model_free(model);
    throw err;
  }
}

export class LlamaEngine implements Engine {
  readonly model: ModelInfo;
  readonly capabilities: Capabilities;
  readonly special: SpecialTokens;
  /** Forward passes run so far (llama_decode calls) and the tokens they evaluated. */
  readonly counters: EngineCounters = { forwardPasses: 0, tokensEvaluated: 0 };

  private ctx: bigint = NULL;
  private readonly vocab: bigint;
  private readonly mem: bigint;
  private readonly tap: GraphTap | undefined;
  private readonly shape: ModelShape;
  private readonly budget: ObservationBudget;
  private readonly recordings = new Map<number, SequenceRecordings>();
  private readonly lengths: Int32Array;
  private steering: PendingSteer[] = [];
  /** The context-wide control vector and each sequence's own. */
  private readonly vectors: ControlVectors;
  /** Logits copied aside by lookahead(), served by logits() until the next decode. */
  private readonly restoredLogits = new Map<number, Float32Array>();
  /** Batch index of each sequence's logits row in the last llama_decode. */
  private logitRows = new Map<number, number>();
  private readonly logitViews = new Map<bigint, Float32Array>();
  private disposed = false;
  /** llama_decode runs on a libuv thread (decodeAsync): the context must not be touched. */
  private inFlight = false;
  /** dispose() came while a decode was in flight: free everything when it completes. */
  private releaseWhenIdle = false;
  /** Cells of each sequence's own KV stream (kvUnified: false); undefined when shared. */
  private readonly cellsPerSequence: number | undefined;

  // Batch arrays live in native memory (koffi.alloc) so their addresses never move.
  private readonly nativeBlocks: bigint[] = [];
  private readonly batchToken: Int32Array;
  private readonly batchPos: Int32Array;
  private readonly batchNSeq: Int32Array;
  private readonly batchSeq: Int32Array;
  private readonly batchLogits: Int8Array;
  private readonly batchStruct: Record<string, unknown>;
  private readonly textBuf = Buffer.alloc(1024);
  private tokenBuf = new Int32Array(1024);
  /** Each token's text (rendered without specials), filled as tokens are seen: the decode loop
   * asks for every sampled token's, and a native call and a Buffer each time add up. */
  private readonly pieces: Array<string | undefined> = [];
  /** Per token: 0 not asked yet, 1 not end-of-generation, 2 end-of-generation. */
  private eog: Uint8Array | undefined;

  constructor(
    private readonly api: LlamaApi,
    private modelPtr: bigint,
    options: LlamaEngineOptions,
    backend: Capabilities["backend"],
  ) {
    const path = options.modelPath;
    const architecture = this.metadataOf("general.architecture") ?? "unknown";
    if (api.llama_model_has_encoder(modelPtr))
      throw new EngineError(
        "unsupported-model",
        `unsupported model ${path}: encoder-decoder architecture "${architecture}"`,
      );
    if (api.llama_model_is_recurrent(modelPtr) || api.llama_model_is_hybrid(modelPtr))
      throw new EngineError(
        "unsupported-model",
        `unsupported model ${path}: recurrent architecture "${architecture}" (no exact rewind)`,
      );
    this.vocab = api.llama_model_get_vocab(modelPtr);
    const nEmbd = api.llama_model_n_embd(modelPtr);
    const nHead = api.llama_model_n_head(modelPtr);
    const nHeadKv = api.llama_model_n_head_kv(modelPtr);
    const nLayer = api.llama_model_n_layer(modelPtr);
    const keyLength = Number(this.metadataOf(`${architecture}.attention.key_length`));
    const headDim = Number.isInteger(keyLength) && keyLength > 0 ? keyLength : nEmbd / nHead;
    const trainCtx = api.llama_model_n_ctx_train(modelPtr);
    this.shape = { nLayer, nHead, nEmbd, nEmbdKv: nHeadKv * headDim };

    const contextSize =
      typeof options.contextSize === "function"
        ? options.contextSize(trainCtx)
        : (options.contextSize ?? Math.min(trainCtx > 0 ? trainCtx : 4096, 4096));
    const sequences = options.sequences ?? 1;
    const threads = options.threads ?? defaultThreadCount();
    const kvUnified = options.kvUnified ?? true;
    const glassBox = (options.glassBox ?? true) && kvUnified;
    if (!Number.isInteger(contextSize) || contextSize < 1 || contextSize > 0xffffffff)
      throw new EngineError(
        "argument",
        `contextSize must be a positive integer, got ${contextSize}`,
      );
    if (!Number.isInteger(sequences) || sequences < 1 || sequences > 256)
      throw new EngineError("argument", `sequences must be an integer in 1..256, got ${sequences}`);
    if (!Number.isInteger(threads) || threads < 1)
      throw new EngineError("argument", `threads must be a positive integer, got ${threads}`);
    const batchSize = Math.max(options.batchSize ?? 512, sequences);
    if (backend === "cpu") refuseImpossibleContext(contextSize, this.shape, path);

    this.budget = new ObservationBudget(options.observeBudgetBytes ?? 256 * 1024 * 1024);
    this.tap = glassBox
      ? new GraphTap(api, this.shape, (s) => this.recordingsOf(s), backend === "cpu")
      : undefined;

    const cp = api.llama_context_default_params();
    cp.n_ctx = contextSize;
    cp.n_batch = batchSize;
    // One ubatch per llama_decode keeps the rows of every observed tensor in our batch order.
    cp.n_ubatch = batchSize;
    cp.n_seq_max = sequences;
    cp.n_outputs_max = 0;
    cp.n_outputs_max_per_seq = 0;
    cp.n_threads = threads;
    cp.n_threads_batch = threads;
    // Attention probabilities exist as a tensor only without flash attention; asked for without
    // the tap, llama.cpp decides (on the CPU: on), as llama-server does by default.
    cp.flash_attn_type =
      !this.tap && options.flashAttention === true
        ? LLAMA_FLASH_ATTN_TYPE_AUTO
        : LLAMA_FLASH_ATTN_TYPE_DISABLED;
    // A unified KV buffer keeps batch rows in order (no per-sequence split of the ubatch).
    cp.kv_unified = kvUnified;
    cp.cb_eval = this.tap ? this.tap.pointer : null;
    cp.cb_eval_user_data = null;
    takeRecentLog();
    const ctx = api.llama_init_from_model(modelPtr, cp);
    if (isNull(ctx))
      throw new EngineError(
        "context-create",
        `cannot create a context of ${contextSize} tokens × ${sequences} sequence(s) for ${path}: ` +
          (takeRecentLog() || "llama.cpp returned no context (out of memory?)"),
      );
    this.ctx = ctx;
    this.mem = api.llama_get_memory(ctx);
    this.vectors = new ControlVectors(api, () => this.ctx, nEmbd, nLayer);

    const batch = batchSize;
    const alloc = (type: string, count: number): bigint => {
      const p = koffi.alloc(type, count) as bigint;
      this.nativeBlocks.push(p);
      return p;
    };
    const tokenPtr = alloc("int32_t", batch);
    const posPtr = alloc("int32_t", batch);
    const nSeqPtr = alloc("int32_t", batch);
    const seqPtr = alloc("int32_t", batch);
    const seqPtrsPtr = alloc("uint64_t", batch);
    const logitsPtr = alloc("int8_t", batch);
    this.batchToken = new Int32Array(koffi.view(tokenPtr, batch * 4));
    this.batchPos = new Int32Array(koffi.view(posPtr, batch * 4));
    this.batchNSeq = new Int32Array(koffi.view(nSeqPtr, batch * 4)).fill(1);
    this.batchSeq = new Int32Array(koffi.view(seqPtr, batch * 4));
    this.batchLogits = new Int8Array(koffi.view(logitsPtr, batch));
    const seqPtrs = new BigUint64Array(koffi.view(seqPtrsPtr, batch * 8));
    for (let i = 0; i < batch; i++) seqPtrs[i] = seqPtr + BigInt(4 * i);
    this.batchStruct = {
      n_tokens: 0,
      token: tokenPtr,
      embd: null,
      pos: posPtr,
      n_seq_id: nSeqPtr,
      seq_id: seqPtrsPtr,
      logits: logitsPtr,
    };
    this.lengths = new Int32Array(sequences);
    this.cellsPerSequence = kvUnified ? undefined : Math.floor(api.llama_n_ctx(ctx) / sequences);

    const tokenOrUndefined = (t: number): Token | undefined => (t >= 0 ? t : undefined);
    this.special = {
      bos: tokenOrUndefined(api.llama_vocab_bos(this.vocab)),
      eos: tokenOrUndefined(api.llama_vocab_eos(this.vocab)),
      eot: tokenOrUndefined(api.llama_vocab_eot(this.vocab)),
      nl: tokenOrUndefined(api.llama_vocab_nl(this.vocab)),
      addBos: api.llama_vocab_get_add_bos(this.vocab),
    };
    const descBuf = Buffer.alloc(256);
    const descLen = api.llama_model_desc(modelPtr, descBuf, descBuf.length);
    this.model = {
      path,
      architecture,
      description: utf8(descBuf, descLen),
      trainContextSize: trainCtx,
      chatTemplate:
        options.chatTemplate ?? api.llama_model_chat_template(modelPtr, null) ?? undefined,
    };
    this.capabilities = {
      nLayer,
      nHead,
      nHeadKv,
      headDim,
      nEmbd,
      nEmbdKv: this.shape.nEmbdKv,
      nVocab: api.llama_vocab_n_tokens(this.vocab),
      contextSize: api.llama_n_ctx(ctx),
      batchSize: api.llama_n_batch(ctx),
      maxSequences: api.llama_n_seq_max(ctx),
      // What the context really runs with, read back from llama.cpp.
      threads: api.llama_n_threads(ctx),
      backend,
      reads: { hidden: glassBox, attention: glassBox, kv: glassBox, finalNorm: glassBox },
      steer: glassBox,
      backgroundDecode: !this.tap,
    };
  }

  // ---- vocabulary and text ----

  tokenize(text: string, options: { addSpecial?: boolean; parseSpecial?: boolean } = {}): Token[] {
    this.live();
    const bytes = Buffer.from(text, "utf8");
    const call = () =>
      this.api.llama_tokenize(
        this.vocab,
        bytes,
        bytes.length,
        this.tokenBuf,
        this.tokenBuf.length,
        options.addSpecial ?? false,
        options.parseSpecial ?? false,
      ) as number;
    let n = call();
    if (n < 0) {
      this.tokenBuf = new Int32Array(-n + 16);
      n = call();
    }
    if (n < 0) throw new EngineError("argument", `cannot tokenize text of ${bytes.length} bytes`);
    return Array.from(this.tokenBuf.subarray(0, n));
  }

  detokenize(tokens: ArrayLike<Token>, options: { renderSpecial?: boolean } = {}): string {
    this.live();
    const ids = Int32Array.from(tokens);
    if (ids.length === 0) return "";
    // An out-of-range id would throw a C++ exception inside llama.cpp, which aborts the process.
    for (const t of ids) this.checkToken(t);
    let buf = this.textBuf;
    const call = () =>
      this.api.llama_detokenize(
        this.vocab,
        ids,
        ids.length,
        buf,
        buf.length,
        false,
        options.renderSpecial ?? false,
      ) as number;
    let n = call();
    if (n < 0) {
      buf = Buffer.alloc(-n + 16);
      n = call();
    }
    return utf8(buf, n);
  }

  /** The raw bytes of a token's text (byte-fallback tokens may be partial UTF-8). */
  tokenBytes(token: Token, options: { renderSpecial?: boolean } = {}): Buffer {
    this.live();
    this.checkToken(token);
    let buf = this.textBuf;
    const call = () =>
      this.api.llama_token_to_piece(
        this.vocab,
        token,
        buf,
        buf.length,
        0,
        options.renderSpecial ?? false,
      ) as number;
    let n = call();
    if (n < 0) {
      buf = Buffer.alloc(-n + 16);
      n = call();
    }
    return Buffer.from(buf.subarray(0, Math.max(0, n)));
  }

  tokenText(token: Token, options: { renderSpecial?: boolean } = {}): string {
    if (options.renderSpecial) return this.tokenBytes(token, options).toString("utf8");
    this.live();
    return (this.pieces[token] ??= this.tokenBytes(token).toString("utf8"));
  }

  isEndOfGeneration(token: Token): boolean {
    this.live();
    this.checkToken(token);
    this.eog ??= new Uint8Array(this.capabilities.nVocab);
    const known = this.eog[token]!;
    if (known !== 0) return known === 2;
    const is = this.api.llama_vocab_is_eog(this.vocab, token) as boolean;
    this.eog[token] = is ? 2 : 1;
    return is;
  }

  isControl(token: Token): boolean {
    this.live();
    this.checkToken(token);
    return this.api.llama_vocab_is_control(this.vocab, token);
  }

  renderChat(
    messages: ChatMessage[],
    options: { addAssistant?: boolean; template?: string } = {},
  ): string {
    this.live();
    const template = options.template ?? this.model.chatTemplate;
    if (template === undefined)
      throw new EngineError(
        "chat-template",
        `${this.model.path} has no chat template; pass a template (e.g. "chatml")`,
      );
    if (messages.length === 0) throw new EngineError("argument", "renderChat needs messages");
    const addAssistant = options.addAssistant ?? true;
    // A name ("chatml", "llama3" …) picks from llama.cpp's built-in list; a template text is
    // rendered as Jinja, and only one this Jinja cannot parse goes to llama.cpp, which then
    // recognises it by its markers or refuses it.
    if (isTemplateName(template)) return this.renderBuiltIn(template, messages, addAssistant);
    const parsed = parseChatTemplate(template);
    if (parsed instanceof Error)
      return this.renderBuiltIn(template, messages, addAssistant, parsed.message);
    return renderChatTemplate(parsed, template, messages, {
      addGenerationPrompt: addAssistant,
      ...this.templateTokens(),
    });
  }

  /** The vocabulary's BOS/EOS texts as chat templates see them. */
  templateTokens(): { bosToken: string; eosToken: string; tokenizerAddsBos: boolean } {
    const text = (t: Token | undefined) =>
      t === undefined ? "" : this.tokenText(t, { renderSpecial: true });
    return {
      bosToken: text(this.special.bos),
      eosToken: text(this.special.eos),
      tokenizerAddsBos: this.special.addBos,
    };
  }

  /** llama_chat_apply_template: llama.cpp's fixed list of known templates. */
  private renderBuiltIn(
    template: string,
    messages: ChatMessage[],
    addAssistant: boolean,
    jinjaError?: string,
  ): string {
    const chat = messages.map((m) => ({ role: m.role, content: m.content }));
    let size = 256 + chat.reduce((n, m) => n + 2 * Buffer.byteLength(m.content) + 64, 0);
    for (let attempt = 0; attempt < 2; attempt++) {
      const buf = Buffer.alloc(size);
      const n = this.api.llama_chat_apply_template(
        template,
        chat,
        chat.length,
        addAssistant,
        buf,
        size,
      ) as number;
      if (n < 0)
        throw new EngineError(
          "chat-template",
          jinjaError === undefined
            ? `llama.cpp has no built-in chat template named ${JSON.stringify(template)}`
            : `the chat template does not parse as Jinja (${jinjaError}) and llama.cpp does not ` +
                `recognise it (${JSON.stringify(template.slice(0, 60))}…)`,
        );
      if (n <= size) return utf8(buf, n);
      size = n + 16;
    }
    throw new EngineError("chat-template", "chat template output kept growing");
  }

  metadata(key: string): string | undefined {
    this.live();
    return this.metadataOf(key);
  }

  private metadataOf(key: string): string | undefined {
    let buf = this.textBuf;
    let n = this.api.llama_model_meta_val_str(this.modelPtr, key, buf, buf.length) as number;
    if (n < 0) return undefined;
    if (n >= buf.length) {
      buf = Buffer.alloc(n + 1);
      n = this.api.llama_model_meta_val_str(this.modelPtr, key, buf, buf.length);
    }
    return utf8(buf, n);
  }

  // ---- decoding ----

  decode(items: DecodeItem[]): void {
    const plan = this.planDecode(items);
    if (plan) this.decodePlanned(plan);
  }

  /**
   * decode() with llama_decode on a libuv worker thread (koffi's async call), so JavaScript
   * runs meanwhile on the core the engine's thread count leaves free. Only a batch that fits one
   * llama_decode on an engine without the glass-box tap (a JavaScript callback per tensor, which
   * must run on this thread) goes there; any other decodes synchronously before this returns.
   * Until the promise settles, calls that touch the context throw (EngineError "busy");
   * vocabulary and metadata calls stay allowed (llama.cpp reads its vocabulary through const
   * methods that a decode never writes).
   */
  decodeAsync(items: DecodeItem[]): Promise<void> {
    let plan: DecodePlan | undefined;
    try {
      plan = this.planDecode(items);
      if (!plan) return Promise.resolve();
      if (this.tap || plan.rows.length + plan.finals.length > this.capabilities.batchSize) {
        this.decodePlanned(plan);
        return Promise.resolve();
      }
    } catch (err) {
      return Promise.reject(err);
    }
    const rows = this.inItemOrder(items, plan.rows, plan.finals);
    const batch = this.beginRun(rows, plan.steering);
    this.inFlight = true;
    return new Promise((resolve, reject) => {
      this.api.llama_decode.async(this.ctx, this.batchStruct, (err: unknown, rc: number) => {
        this.inFlight = false;
        try {
          if (err) throw err;
          this.endRun(rows, batch, rc);
          resolve();
        } catch (e) {
          reject(e);
        } finally {
          if (this.releaseWhenIdle) this.release();
        }
      });
    });
  }

  /** Checks a decode's items and lays out its rows; undefined when there is nothing to do. */
  private planDecode(items: DecodeItem[]): DecodePlan | undefined {
    this.usable();
    if (items.length === 0) return undefined;
    const seen = new Set<number>();
    let total = 0;
    for (const item of items) {
      this.checkSeq(item.seq);
      if (seen.has(item.seq))
        throw new EngineError("argument", `sequence ${item.seq} appears twice in one decode`);
      seen.add(item.seq);
      if (item.tokens.length === 0)
        throw new EngineError("argument", `no tokens to decode for sequence ${item.seq}`);
      for (let i = 0; i < item.tokens.length; i++) this.checkToken(item.tokens[i]!);
      total += item.tokens.length;
      const own = this.cellsPerSequence;
      if (own !== undefined && this.lengths[item.seq]! + item.tokens.length > own)
        throw new EngineError(
          "context-full",
          `context full: sequence ${item.seq} holds ${this.lengths[item.seq]} of its ${own} cells, ${item.tokens.length} more needed`,
        );
    }
    let used = 0;
    for (const n of this.lengths) used += n;
    if (used + total > this.capabilities.contextSize)
      throw new EngineError(
        "context-full",
        `context full: ${used} of ${this.capabilities.contextSize} cells used, ${total} more needed`,
      );

    const flags = this.tap?.flags;
    const everyOutput = !!flags && (flags.hidden || flags.finalNorm);
    const rows: Row[] = [];
    const finals: Row[] = [];
    for (const item of items) {
      const n = item.tokens.length;
      for (let i = 0; i < n - 1; i++)
        rows.push({ seq: item.seq, token: item.tokens[i]!, output: everyOutput });
      finals.push({ seq: item.seq, token: item.tokens[n - 1]!, output: true });
    }
    const steering = this.steering;
    this.steering = steering.filter((s) => s.persistent);
    return { items, rows, finals, steering };
  }

  private decodePlanned(plan: DecodePlan): void {
    try {
      this.runAll(plan);
    } finally {
      this.tap?.captureNames.clear();
    }
  }

  /** Each item's tokens together and in order: prefix rows then the last token. */
  private inItemOrder(items: DecodeItem[], rows: Row[], finals: Row[]): Row[] {
    const ordered: Row[] = [];
    for (const item of items) {
      for (const r of rows) if (r.seq === item.seq) ordered.push(r);
      ordered.push(finals.find((f) => f.seq === item.seq)!);
    }
    return ordered;
  }

  private runAll({ items, rows, finals, steering }: DecodePlan): void {
    const batchSize = this.capabilities.batchSize;
    if (rows.length + finals.length <= batchSize) {
      this.run(this.inItemOrder(items, rows, finals), steering);
    } else {
      // Long inputs: prefixes in full batches, then every item's last token together, so all
      // logits come from the same (final) llama_decode.
      for (let start = 0; start < rows.length; start += batchSize)
        this.run(rows.slice(start, start + batchSize), steering);
      this.run(finals, steering);
    }
  }

  private run(rows: Row[], steering: PendingSteer[]): void {
    const batch = this.beginRun(rows, steering);
    let rc: number;
    try {
      rc = this.api.llama_decode(this.ctx, this.batchStruct);
    } finally {
      this.tap?.end();
    }
    this.endRun(rows, batch, rc);
  }

  /** Writes rows into the native batch and readies the tap for one llama_decode. */
  private beginRun(rows: Row[], steering: PendingSteer[]): RunningBatch {
    // llama_decode writes its logits over the buffer that deferred readers still point at.
    settleLogitReaders();
    const n = rows.length;
    const outputs: number[] = [];
    const next = Int32Array.from(this.lengths);
    for (let i = 0; i < n; i++) {
      const r = rows[i]!;
      this.batchToken[i] = r.token;
      this.batchPos[i] = next[r.seq]!++;
      this.batchSeq[i] = r.seq;
      this.batchLogits[i] = r.output ? 1 : 0;
      if (r.output) outputs.push(i);
    }
    this.batchStruct.n_tokens = n;
    this.logitRows.clear();
    this.restoredLogits.clear();
    const vectorEdits = this.vectors.plan(this.batchSeq, n);
    const findVectorTensors = this.vectors.wantsTensors;
    if (this.tap) {
      const layout: BatchLayout = {
        n,
        seqs: this.batchSeq.slice(0, n),
        pos: this.batchPos.slice(0, n),
        outputs,
      };
      this.tap.begin(
        layout,
        vectorEdits.length ? steering.concat(vectorEdits) : steering,
        findVectorTensors,
      );
    }
    return { next, outputs, findVectorTensors };
  }

  /** Takes in llama_decode's result code: lengths and logit rows on success, an error else. */
  private endRun(
    rows: Row[],
    { next, outputs, findVectorTensors }: RunningBatch,
    rc: number,
  ): void {
    this.counters.forwardPasses++;
    this.counters.tokensEvaluated += rows.length;
    if (rc !== 0) {
      // 1 and -1 leave the memory as before; other failures may keep processed ubatches.
      this.resyncLengths();
      throw new EngineError(
        rc === 1 ? "context-full" : "decode",
        rc === 1
          ? "llama_decode found no KV slot for the batch (context full)"
          : `llama_decode failed with code ${rc}${takeRecentLog() ? `: ${takeRecentLog()}` : ""}`,
      );
    }
    this.lengths.set(next);
    for (const i of outputs) this.logitRows.set(rows[i]!.seq, i);
    if (findVectorTensors && this.tap) this.vectors.foundTensors(this.tap.vectorTensors);
    const error = this.tap?.error;
    if (error !== undefined)
      throw new EngineError(
        "observer",
        `glass-box callback failed (the decode itself completed): ${(error as Error)?.message ?? error}`,
      );
  }

  private resyncLengths(): void {
    for (let s = 0; s < this.lengths.length; s++)
      this.lengths[s] = this.api.llama_memory_seq_pos_max(this.mem, s) + 1;
  }

  logits(seq: number): Float32Array {
    this.usable();
    this.checkSeq(seq);
    const row = this.logitRows.get(seq);
    if (row === undefined) {
      const restored = this.restoredLogits.get(seq);
      if (restored) return restored;
      throw new EngineError(
        "argument",
        `no logits for sequence ${seq}: it was not part of the last decode (or was truncated since)`,
      );
    }
    const ptr = this.api.llama_get_logits_ith(this.ctx, row) as bigint | null;
    if (isNull(ptr))
      throw new EngineError("decode", `llama.cpp has no logits for batch row ${row}`);
    let view = this.logitViews.get(ptr!);
    if (!view) {
      if (this.logitViews.size > 256) this.logitViews.clear();
      view = new Float32Array(koffi.view(ptr!, this.capabilities.nVocab * 4));
      this.logitViews.set(ptr!, view);
    }
    return view;
  }

  length(seq: number): number {
    this.settled();
    this.checkSeq(seq);
    return this.lengths[seq]!;
  }

  freeCells(seq: number): number {
    this.settled();
    this.checkSeq(seq);
    let used = 0;
    for (const n of this.lengths) used += n;
    const shared = this.capabilities.contextSize - used;
    const own = this.cellsPerSequence;
    return own === undefined ? shared : Math.min(shared, own - this.lengths[seq]!);
  }

  truncate(seq: number, length: number): void {
    this.usable();
    this.checkSeq(seq);
    const current = this.lengths[seq]!;
    if (!Number.isInteger(length) || length < 0 || length > current)
      throw new EngineError(
        "argument",
        `cannot truncate sequence ${seq} to ${length}: it has ${current} positions`,
      );
    if (length === current) return;
    if (!this.api.llama_memory_seq_rm(this.mem, seq, length, -1))
      throw new EngineError(
        "decode",
        `llama.cpp refused to remove positions ${length}.. of sequence ${seq}`,
      );
    this.lengths[seq] = length;
    this.recordings.get(seq)?.truncate(length);
    this.tap?.forgetCells(seq, length);
    this.logitRows.delete(seq);
    this.restoredLogits.delete(seq);
  }

  // ---- glass box ----

  observe(options: ObserveOptions): void {
    this.usable();
    const tap = this.tap;
    const wants = Object.values(options).some(Boolean);
    if (!tap) {
      if (wants) throw new EngineError("observer", "this engine was opened with glassBox: false");
      return;
    }
    for (const key of ["hidden", "attention", "kv", "finalNorm"] as const)
      if (options[key] !== undefined) tap.flags[key] = options[key];
  }

  observing(): Required<ObserveOptions> {
    return this.tap
      ? { ...this.tap.flags }
      : { hidden: false, attention: false, kv: false, finalNorm: false };
  }

  hidden(seq: number, layer: number, pos: number): Float32Array | undefined {
    this.settled();
    this.checkSeq(seq);
    this.checkLayer(layer);
    return this.recordings.get(seq)?.hidden[layer]!.read(pos);
  }

  finalNorm(seq: number, pos: number): Float32Array | undefined {
    this.settled();
    this.checkSeq(seq);
    return this.recordings.get(seq)?.finalNorm.read(pos);
  }

  attention(seq: number, layer: number, head: number, qPos: number): Float32Array | undefined {
    this.settled();
    this.checkSeq(seq);
    this.checkLayer(layer);
    if (!Number.isInteger(head) || head < 0 || head >= this.capabilities.nHead)
      throw new EngineError(
        "argument",
        `head ${head} out of range 0..${this.capabilities.nHead - 1}`,
      );
    return this.recordings.get(seq)?.attention[layer]!.read(head, qPos);
  }

  kv(
    seq: number,
    layer: number,
    headKv: number,
    pos: number,
    kind: KvKind,
  ): Float32Array | undefined {
    this.settled();
    this.checkSeq(seq);
    this.checkLayer(layer);
    const { nHeadKv, headDim } = this.capabilities;
    if (!Number.isInteger(headKv) || headKv < 0 || headKv >= nHeadKv)
      throw new EngineError("argument", `KV head ${headKv} out of range 0..${nHeadKv - 1}`);
    const rec = this.recordings.get(seq);
    const table = kind === "k" ? rec?.keys : kind === "v" ? rec?.values : rec?.keysPreRope;
    const row = table?.[layer]!.read(pos);
    return row?.subarray(headKv * headDim, (headKv + 1) * headDim);
  }

  observationStats(): ObservationStats {
    return {
      bytes: this.budget.used,
      budgetBytes: this.budget.limit,
      budgetExceeded: this.budget.exceeded,
    };
  }

  steer(layer: number, edit: SteerEdit, options: SteerOptions = {}): void {
    this.usable();
    if (!this.tap) throw new EngineError("observer", "this engine was opened with glassBox: false");
    this.checkLayer(layer);
    if (options.seq !== undefined) this.checkSeq(options.seq);
    let copy: SteerEdit;
    if ("add" in edit) {
      if (edit.add.length !== this.capabilities.nEmbd)
        throw new EngineError(
          "argument",
          `steering vector has ${edit.add.length} values, the model's hidden size is ${this.capabilities.nEmbd}`,
        );
      copy = { add: Float32Array.from(edit.add) };
    } else {
      if (!Number.isFinite(edit.scale))
        throw new EngineError("argument", `steering scale must be finite, got ${edit.scale}`);
      copy = { scale: edit.scale };
    }
    this.steering.push({
      layer,
      edit: copy,
      seq: options.seq,
      persistent: options.persistent ?? false,
    });
  }

  clearSteering(): void {
    this.steering = [];
  }

  setControlVector(
    seq: number,
    layers: ReadonlyMap<number, Float32Array> | null,
    options: { via?: "auto" | "tap" } = {},
  ): void {
    this.usable();
    this.checkSeq(seq);
    const { nEmbd, maxSequences } = this.capabilities;
    if (layers) {
      for (const [layer, v] of layers) {
        this.checkLayer(layer);
        if (v.length !== nEmbd)
          throw new EngineError(
            "argument",
            `control vector for layer ${layer} has ${v.length} values, the model's hidden size is ${nEmbd}`,
          );
      }
    }
    const tapOnly = options.via === "tap";
    // Without the tap only llama.cpp's context-wide vector is there: one sequence, layers >= 1.
    if (!this.tap && layers && (maxSequences > 1 || layers.has(0) || tapOnly))
      throw new EngineError("observer", "this engine was opened with glassBox: false");
    this.vectors.set(seq, layers, tapOnly);
  }

  controlVectorOf(seq: number): ReadonlyMap<number, Float32Array> | null {
    this.checkSeq(seq);
    return this.vectors.of(seq);
  }

  /**
   * llama.cpp's llama_set_adapter_cvec (formerly llama_apply_adapter_cvec) for every sequence:
   * `data` holds nEmbd floats per layer starting at layer 1, applied to layers ilStart..ilEnd;
   * null clears it. Sequences' own vectors (setControlVector) add to it.
   */
  nativeControlVector(data: Float32Array | null, ilStart = 1, ilEnd = this.shape.nLayer - 1): void {
    this.usable();
    const { nEmbd, nLayer } = this.shape;
    if (data && (data.length % nEmbd !== 0 || ilStart < 1 || ilEnd >= nLayer || ilStart > ilEnd))
      throw new EngineError(
        "argument",
        `control vector data of ${data.length} values for layers ${ilStart}..${ilEnd} does not fit ` +
          `a model with hidden size ${nEmbd} and ${nLayer} layers`,
      );
    this.vectors.setBase(data, ilStart, ilEnd);
  }

  /** How often llama.cpp's control vector was (re)installed and rewritten in place. */
  controlVectorCounters(): NativeVectorCounters {
    return { ...this.vectors.counters };
  }

  lookahead(
    seq: number,
    first: Token,
    steps: number,
    score: (logits: Float32Array, pos: number) => number,
  ): number[] {
    this.usable();
    this.checkSeq(seq);
    this.checkToken(first);
    if (!Number.isInteger(steps) || steps < 1)
      throw new EngineError("argument", `lookahead steps must be a positive integer, got ${steps}`);
    // Every sequence's current logits are about to be overwritten by the scratch decodes.
    const saved = new Map<number, Float32Array>();
    for (const s of new Set([...this.logitRows.keys(), ...this.restoredLogits.keys()]))
      saved.set(s, Float32Array.from(this.logits(s)));
    const pending = this.steering;
    this.steering = pending.filter((s) => s.persistent);
    const start = this.lengths[seq]!;
    const scores: number[] = [];
    try {
      let token = first;
      for (let i = 0; i < steps; i++) {
        this.decode([{ seq, tokens: [token] }]);
        const logits = this.logits(seq);
        scores.push(score(logits, start + i));
        token = argmax(logits);
      }
    } finally {
      this.truncate(seq, start);
      this.steering = pending;
      this.logitRows.clear();
      this.restoredLogits.clear();
      for (const [s, l] of saved) this.restoredLogits.set(s, l);
    }
    return scores;
  }

  /** llama.cpp's serialized state of one sequence (KV cells and positions); for tests. */
  sequenceState(seq: number): Buffer {
    this.usable();
    this.checkSeq(seq);
    const size = Number(this.api.llama_state_seq_get_size(this.ctx, seq));
    const buf = Buffer.alloc(size);
    const written = Number(this.api.llama_state_seq_get_data(this.ctx, buf, size, seq));
    return buf.subarray(0, written);
  }

  /**
   * Copies the named graph nodes (e.g. "result_output", "kqv_out-2") during the next decode;
   * read them with captured(). For tests and exploration: each capture splits the graph.
   */
  captureNext(names: string[]): void {
    this.usable();
    if (!this.tap) throw new EngineError("observer", "this engine was opened with glassBox: false");
    for (const n of names) this.tap.captureNames.add(n);
  }

  captured(name: string): CapturedTensor | undefined {
    return this.tap?.captures.get(name);
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    // The worker thread is using the context: free it when that decode completes.
    if (this.inFlight) this.releaseWhenIdle = true;
    else this.release();
  }

  private release(): void {
    this.releaseWhenIdle = false;
    settleLogitReaders();
    claimLlamaLog(this.api);
    if (!isNull(this.ctx)) this.api.llama_free(this.ctx);
    this.ctx = NULL;
    if (!isNull(this.modelPtr)) this.api.llama_model_free(this.modelPtr);
    this.modelPtr = NULL;
    if (this.tap) koffi.unregister(this.tap.pointer);
    for (const p of this.nativeBlocks) koffi.free(p);
    this.nativeBlocks.length = 0;
    for (const r of this.recordings.values()) r.release();
    this.recordings.clear();
    this.logitViews.clear();
  }

  // ---- helpers ----

  private recordingsOf(seq: number): SequenceRecordings {
    let r = this.recordings.get(seq);
    if (!r) {
      r = new SequenceRecordings(this.shape, this.budget);
      this.recordings.set(seq, r);
    }
    return r;
  }

  private live(): void {
    if (this.disposed) throw new EngineError("disposed", "the engine has been disposed");
  }

  /** Context state is being written by a decode on another thread: reading it would race. */
  private settled(): void {
    if (this.inFlight)
      throw new EngineError(
        "busy",
        "a decode is in flight (decodeAsync): await it before using the context",
      );
  }

  /** The context exists and no decode is writing it. */
  private usable(): void {
    this.live();
    this.settled();
  }

  private checkSeq(seq: number): void {
    const max = this.lengths.length;
    if (!Number.isInteger(seq) || seq < 0 || seq >= max)
      throw new EngineError("argument", `sequence ${seq} out of range 0..${max - 1}`);
  }

  private checkLayer(layer: number): void {
    const n = this.shape.nLayer;
    if (!Number.isInteger(layer) || layer < 0 || layer >= n)
      throw new EngineError("argument", `layer ${layer} out of range 0..${n - 1}`);
  }

  private checkToken(token: number): void {
    const n = this.capabilities?.nVocab ?? Infinity;
    if (!Number.isInteger(token) || token < 0 || token >= n)
      throw new EngineError("argument", `token ${token} out of range 0..${n - 1}`);
  }
}
