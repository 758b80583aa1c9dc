// OpenAI response bodies built from finished (or streaming) choices: chat.completion and
// text_completion objects, their stream chunks, logprobs in each endpoint's format, and usage.
import type { Choice, Delta, TokenLogprob } from "./choice.js";

export type Endpoint = "chat" | "text";

export interface ResponseMeta {
  id: string;
  created: number;
  model: string;
  promptTokens: number;
  /** Prompt tokens found in the slot's KV cache and not decoded again (prefix reuse). */
  cachedTokens: number;
}

const bytesOf = (text: string) => [...Buffer.from(text, "utf8")];

function chatLogprobs(list: TokenLogprob[]) {
  return {
    content: list.map((t) => ({
      token: t.text,
      logprob: t.logprob,
      bytes: bytesOf(t.text),
      top_logprobs: t.top.map((a) => ({
        token: a.text,
        logprob: a.logprob,
        bytes: bytesOf(a.text),
      })),
    })),
  };
}

function textLogprobs(list: TokenLogprob[], startOffset: number) {
  let offset = startOffset;
  const textOffset: number[] = [];
  for (const t of list) {
    textOffset.push(offset);
    offset += t.text.length;
  }
  return {
    tokens: list.map((t) => t.text),
    token_logprobs: list.map((t) => t.logprob),
    top_logprobs: list.map((t) => Object.fromEntries(t.top.map((a) => [a.text, a.logprob]))),
    text_offset: textOffset,
  };
}

export function usageOf(meta: ResponseMeta, choices: readonly Choice[]) {
  const completion = choices.reduce((n, c) => n + c.sampledTokens, 0);
  return {
    prompt_tokens: meta.promptTokens,
    completion_tokens: completion,
    total_tokens: meta.promptTokens + completion,
    prompt_tokens_details: { cached_tokens: meta.cachedTokens },
  };
}

function ruffianOf(c: Choice) {
  return {
    regions: c.regions,
    hookConsole: c.hookConsole,
    rewinds: c.rewinds,
    injectedTokens: c.done?.stats.injectedTokens ?? 0,
    stopped: c.stopped,
  };
}

/** The whole response of a non-streaming request. */
export function completionBody(
  endpoint: Endpoint,
  meta: ResponseMeta,
  choices: readonly Choice[],
  wantLogprobs: boolean,
) {
  const common = { id: meta.id, created: meta.created, model: meta.model };
  const usage = usageOf(meta, choices);
  if (endpoint === "chat")
    return {
      ...common,
      object: "chat.completion",
      choices: choices.map((c) => ({
        index: c.index,
        message: { role: "assistant", content: c.content, refusal: null },
        logprobs: wantLogprobs ? chatLogprobs(c.logprobs) : null,
        finish_reason: c.finishReason,
        ruffian: ruffianOf(c),
      })),
      usage,
      ruffian: ruffianOf(choices[0]!),
    };
  return {
    ...common,
    object: "text_completion",
    choices: choices.map((c) => ({
      index: c.index,
      text: c.content,
      logprobs: wantLogprobs ? textLogprobs(c.logprobs, 0) : null,
      finish_reason: c.finishReason,
      ruffian: ruffianOf(c),
    })),
    usage,
    ruffian: ruffianOf(choices[0]!),
  };
}

/** One stream chunk for one choice's delta (null when there is nothing to send). */
export function chunkBody(
  endpoint: Endpoint,
  meta: ResponseMeta,
  choice: Choice,
  delta: Delta,
  options: { first: boolean; finished: boolean; wantLogprobs: boolean; textOffset: number },
) {
  const finish = options.finished ? choice.finishReason : null;
  const empty = delta.content === "" && delta.events.length === 0 && delta.logprobs.length === 0;
  if (!options.first && !finish && empty) return null;
  const common = { id: meta.id, created: meta.created, model: meta.model };
  const ruffian = delta.events.length > 0 ? { ruffian: { events: delta.events } } : {};
  if (endpoint === "chat")
    return {
      ...common,
      object: "chat.completion.chunk",
      choices: [
        {
          index: choice.index,
          delta: options.first
            ? { role: "assistant", content: delta.content }
            : delta.content
              ? { content: delta.content }
              : {},
          logprobs: options.wantLogprobs ? chatLogprobs(delta.logprobs) : null,
          finish_reason: finish,
        },
      ],
      ...ruffian,
    };
  return {
    ...common,
    object: "text_completion",
    choices: [
      {
        index: choice.index,
        text: delta.content,
        logprobs: options.wantLogprobs ? textLogprobs(delta.logprobs, options.textOffset) : null,
        finish_reason: finish,
      },
    ],
    ...ruffian,
  };
}

/** Stands for a chunk's text while its JSON is cut in two (a file name, the model's id, cannot
 * hold a NUL). */
const TEXT_MARK = "\u0000text\u0000";

/**
 * The JSON of a stream chunk that carries only text for choice `index`, as `chunkBody` makes it
 * (not the first chat chunk, not the last, no events, no logprobs: nearly every chunk). Its head
 * and tail are made once per choice, so each such chunk costs one string escape.
 */
export function textChunkJson(
  endpoint: Endpoint,
  meta: ResponseMeta,
  choice: Choice,
): (content: string) => string {
  const body = chunkBody(
    endpoint,
    meta,
    choice,
    { content: TEXT_MARK, events: [], logprobs: [] },
    { first: false, finished: false, wantLogprobs: false, textOffset: 0 },
  );
  const [head, tail] = JSON.stringify(body).split(JSON.stringify(TEXT_MARK)) as [string, string];
  return (content) => head + JSON.stringify(content) + tail;
}

/** The final chunk of a stream that asked for stream_options.include_usage. */
export function usageChunk(endpoint: Endpoint, meta: ResponseMeta, choices: readonly Choice[]) {
  return {
    id: meta.id,
    created: meta.created,
    model: meta.model,
    object: endpoint === "chat" ? "chat.completion.chunk" : "text_completion",
    choices: [],
    usage: usageOf(meta, choices),
  };
}
