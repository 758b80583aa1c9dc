// Turns a validated OpenAI request into what the decode loop runs: the prompt (rendered with the
// model's format), sampling, stop strings, limits; and refuses parameters that would change the
// result but are not supported, naming them, instead of ignoring them.
import type { Engine } from "../engine/types.js";
import { promptStyle, renderPrompt, stopStrings, turnStopTokens } from "../decode/prompt.js";
import { defaultSyntaxes } from "../decode/scanner.js";
import type { SamplerOptions } from "../decode/sampler.js";
import type { GenerationRequest } from "../decode/loop.js";
import { badRequest } from "./errors.js";
import { syntaxName, type ChatCompletionBody, type CompletionBody } from "./schemas.js";
import type { VectorRegistry } from "./vectors.js";

export interface ServerLimits {
  /** KV cells one slot may fill: prompt + generated + injected tokens. */
  slotContext: number;
  /** Largest `n`. */
  maxChoices: number;
  maxMessages: number;
  /** VM profile of a request's fresh session when it names none. */
  defaultProfile: NonNullable<GenerationRequest["profile"]>;
}

/** What a plan needs from the served model. */
export interface PlanContext {
  engine: Engine;
  limits: ServerLimits;
  vectors: VectorRegistry;
}

export interface RequestPlan {
  prompt: string;
  promptTokens: number[];
  n: number;
  /** The loop request shared by every choice (choice i adds i to the seed when sampling). */
  request: Omit<GenerationRequest, "seq" | "reusePrefix">;
  /** Alternatives per token to report, or -1 when logprobs were not asked for. */
  logprobs: number;
  session: string | undefined;
  stream: boolean;
  includeUsage: boolean;
  tokenEvents: boolean;
}

/** Parameters OpenAI defines that would change the result and that Ruffian does not implement;
 * a value other than the neutral one is refused with a 400 naming the parameter. */
const UNSUPPORTED: Record<string, (v: unknown) => boolean> = {
  tools: (v) => Array.isArray(v) && v.length > 0,
  tool_choice: (v) => v !== "none",
  functions: (v) => Array.isArray(v) && v.length > 0,
  function_call: (v) => v !== "none",
  response_format: (v) => (v as { type?: string }).type !== "text",
  frequency_penalty: (v) => v !== 0,
  presence_penalty: (v) => v !== 0,
  logit_bias: (v) => typeof v === "object" && Object.keys(v as object).length > 0,
  suffix: (v) => v !== "",
  best_of: (v) => v !== 1,
  audio: () => true,
  modalities: (v) => !(Array.isArray(v) && v.every((m) => m === "text")),
  prediction: () => true,
  reasoning_effort: () => true,
  web_search_options: () => true,
};

const UNSUPPORTED_ENTRIES = Object.entries(UNSUPPORTED);

function refuseUnsupported(body: Record<string, unknown>): void {
  for (const [name, changes] of UNSUPPORTED_ENTRIES) {
    const v = body[name];
    if (v !== undefined && v !== null && changes(v))
      throw badRequest(
        `parameter '${name}' is not supported by this server (it would change the result)`,
        name,
        "unsupported_parameter",
      );
  }
}

function messageText(content: ChatCompletionBody["messages"][number]["content"]): string {
  return typeof content === "string" ? content : content.map((p) => p.text).join("");
}

function stopList(stop: ChatCompletionBody["stop"]): string[] {
  if (stop === undefined || stop === null) return [];
  const list = typeof stop === "string" ? [stop] : stop;
  if (list.some((s) => s.length === 0)) throw badRequest("stop strings must not be empty", "stop");
  return list;
}

/** The prompt text of a chat request in the model's own format. */
export function renderChatPrompt(engine: Engine, body: ChatCompletionBody, limits: ServerLimits) {
  if (body.messages.length > limits.maxMessages)
    throw badRequest(
      `too many messages: ${body.messages.length}, at most ${limits.maxMessages}`,
      "messages",
    );
  const messages = body.messages.map((m) => ({ role: m.role, content: messageText(m.content) }));
  const style = promptStyle(engine);
  if (style === "nano" && messages[messages.length - 1]!.role !== "user")
    throw badRequest("the last message must come from the user for this model", "messages");
  try {
    return {
      prompt: renderPrompt(engine, messages),
      stop: stopStrings(style),
      stopTokens: turnStopTokens(engine),
    };
  } catch (err) {
    throw badRequest(`cannot render the conversation: ${(err as Error).message}`, "messages");
  }
}

export function planChat(ctx: PlanContext, body: ChatCompletionBody) {
  const { prompt, stop, stopTokens } = renderChatPrompt(ctx.engine, body, ctx.limits);
  const logprobs = body.logprobs ? (body.top_logprobs ?? 0) : -1;
  if (!body.logprobs && (body.top_logprobs ?? 0) > 0)
    throw badRequest("top_logprobs requires logprobs: true", "top_logprobs");
  const maxTokens = body.max_completion_tokens ?? body.max_tokens ?? undefined;
  return plan(ctx, body, prompt, stop, logprobs, maxTokens ?? undefined, stopTokens);
}

export function planCompletion(ctx: PlanContext, body: CompletionBody) {
  if (body.echo) throw badRequest("parameter 'echo' is not supported", "echo");
  const logprobs = body.logprobs === undefined || body.logprobs === null ? -1 : body.logprobs;
  return plan(ctx, body, body.prompt, [], logprobs, body.max_tokens ?? undefined);
}

function plan(
  { engine, limits, vectors }: PlanContext,
  body: ChatCompletionBody | CompletionBody,
  prompt: string,
  formatStops: string[],
  logprobs: number,
  maxTokens: number | undefined,
  stopTokens: readonly number[] = [],
): RequestPlan {
  refuseUnsupported(body as Record<string, unknown>);
  const n = body.n ?? 1;
  if (n > limits.maxChoices)
    throw badRequest(`n is ${n} but this server has ${limits.maxChoices} slots`, "n");
  const promptTokens = engine.tokenize(prompt, { addSpecial: true, parseSpecial: true });
  if (promptTokens.length === 0) throw badRequest("the prompt is empty", "prompt");
  if (promptTokens.length >= limits.slotContext)
    throw badRequest(
      `the prompt has ${promptTokens.length} tokens but a slot holds ${limits.slotContext}`,
      "messages" in body ? "messages" : "prompt",
      "context_length_exceeded",
    );
  const room = limits.slotContext - promptTokens.length;
  if (maxTokens !== undefined && maxTokens > room)
    throw badRequest(
      `max_tokens is ${maxTokens} but only ${room} tokens fit after the ${promptTokens.length}-token prompt`,
      "max_tokens",
      "context_length_exceeded",
    );
  const temperature = body.temperature ?? 1;
  const sampling: SamplerOptions = {
    temperature,
    topP: body.top_p ?? 1,
    seed: body.seed ?? Math.floor(Math.random() * 2 ** 31),
  };
  const ext = body.ruffian ?? {};
  const wanted = ext.syntaxes ? new Set<string>(ext.syntaxes) : undefined;
  const syntaxes = wanted
    ? defaultSyntaxes().map((s) => ({ ...s, enabled: wanted.has(syntaxName(s)) }))
    : undefined;
  return {
    prompt,
    promptTokens,
    n,
    logprobs,
    session: ext.session,
    stream: body.stream ?? false,
    includeUsage: body.stream_options?.include_usage ?? false,
    tokenEvents: ext.tokens ?? false,
    request: {
      prompt,
      maxTokens: maxTokens ?? room,
      sampling,
      stop: [...formatStops, ...stopList(body.stop)],
      stopTokens,
      hook: ext.hook,
      syntaxes,
      inject: ext.inject ?? true,
      profile: ext.profile ?? limits.defaultProfile,
      topLogprobs: Math.max(0, logprobs),
      // Each token's probability and entropy cost a pass over the vocabulary: only when asked.
      tokenStats: logprobs >= 0 || (ext.tokens ?? false),
      controlVector: vectors.combine(ext.controlVectors ?? []),
      vectors: vectors.size > 0 ? vectors.library : undefined,
    },
  };
}
