// The page's reading of `ruffian serve`'s chat stream: OpenAI chat.completion.chunk objects whose
// deltas carry the text (regions and injected results included, as `ruffian run` prints them),
// `logprobs` for every sampled token, and a `ruffian` extension with the runtime's events (hook
// lines, regions and their outcomes, rewinds, per-token entropy). Everything the panels need is
// turned into one list of `StreamUpdate`s here, so the rest of the page never reads raw chunks.

export interface Alternative {
  token: string;
  probability: number;
}

/** One sampled token as the plots and the token tooltip see it. */
export interface TokenInfo {
  text: string;
  probability: number;
  /** Entropy of the distribution the token was sampled from, nats. */
  entropy: number;
  /** True when the entropy is estimated from the top alternatives only (a lower bound). */
  entropyEstimated: boolean;
  alternatives: Alternative[];
}

/** One line a hook printed (or its error), with the step and sequence it ran at. */
export interface HookLine {
  seq: number;
  step: number;
  hook: string;
  text: string;
  error: boolean;
}

/** A region the runtime ran: its code and what came of it. */
export interface RegionOutcome {
  language: string;
  source: string;
  result: string | null;
  error: string | null;
  compileMs: number | null;
  runMs: number | null;
}

export type StreamUpdate =
  /** Text in the answer and the sampled tokens the chunk reports (null: none). Text no token
   * accounts for was injected by the runtime (results); a token's text may come later. */
  | { kind: "text"; text: string; tokens: TokenInfo[] | null }
  | ({ kind: "hook" } & HookLine)
  | ({ kind: "region" } & RegionOutcome)
  | { kind: "rewind"; erased: string; memo: string }
  | { kind: "usage"; promptTokens: number; completionTokens: number }
  | { kind: "finish"; reason: string };

interface LogprobEntry {
  token: string;
  logprob: number;
  entropy?: number;
  top_logprobs?: Array<{ token: string; logprob: number }>;
}

export interface ChatChunk {
  choices?: Array<{
    delta?: { content?: string | null };
    logprobs?: { content?: LogprobEntry[] | null } | null;
    finish_reason?: string | null;
  }>;
  usage?: { prompt_tokens: number; completion_tokens: number } | null;
  ruffian?: unknown;
}

type Json = Record<string, unknown>;

function num(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/** Shannon entropy over the top alternatives, the remaining mass counted as one more outcome:
 * a lower bound on the true entropy, used only when the server does not send the exact value. */
function entropyFromTop(alternatives: Alternative[]): number {
  let mass = 0;
  let entropy = 0;
  for (const { probability: p } of alternatives) {
    if (p > 0) entropy -= p * Math.log(p);
    mass += p;
  }
  const rest = 1 - mass;
  if (rest > 1e-9) entropy -= rest * Math.log(rest);
  return entropy;
}

function tokenInfo(entry: LogprobEntry, extra: Json | undefined): TokenInfo {
  const alternatives = (entry.top_logprobs ?? []).map((alt) => ({
    token: alt.token,
    probability: Math.exp(alt.logprob),
  }));
  const exact = num(extra?.entropy) ?? num(entry.entropy);
  return {
    text: entry.token,
    probability: num(extra?.probability) ?? Math.exp(entry.logprob),
    entropy: exact ?? entropyFromTop(alternatives),
    entropyEstimated: exact === null,
    alternatives,
  };
}

/** The extension's events, whether it sends `{events: [...]}`, a list, or one event. */
function extensionEvents(ruffian: unknown): Json[] {
  if (Array.isArray(ruffian)) return ruffian as Json[];
  if (ruffian && typeof ruffian === "object") {
    const obj = ruffian as Json;
    if (Array.isArray(obj.events)) return obj.events as Json[];
    if (typeof obj.type === "string") return [obj];
  }
  return [];
}

/** Per-token extras (exact entropy) the extension may send beside the logprobs. */
function extensionTokens(ruffian: unknown): Json[] {
  if (ruffian && typeof ruffian === "object" && !Array.isArray(ruffian)) {
    const tokens = (ruffian as Json).tokens;
    if (Array.isArray(tokens)) return tokens as Json[];
  }
  return extensionEvents(ruffian).filter((e) => e.type === "token");
}

function eventUpdate(event: Json): StreamUpdate | null {
  const type = str(event.type);
  if (type === "hook-log" || type === "hook" || type === "hook-error") {
    const error = type === "hook-error" || typeof event.message === "string";
    return {
      kind: "hook",
      seq: num(event.seq) ?? 0,
      step: num(event.step) ?? 0,
      hook: str(event.hook),
      text: str(event.text) || str(event.message) || str(event.line),
      error,
    };
  }
  if (type === "rewind") {
    return { kind: "rewind", erased: str(event.erased), memo: str(event.memo) };
  }
  if (type === "region" || type === "region-end" || type === "result" || type === "vm") {
    const outcome = (event.outcome ?? {}) as Json;
    const errorObj = (outcome.error ?? event.error) as Json | string | undefined;
    const error =
      typeof errorObj === "string"
        ? errorObj
        : errorObj && typeof errorObj === "object"
          ? str(errorObj.message)
          : "";
    const stats = (outcome.stats ?? event.stats ?? event) as Json;
    const region = (event.region ?? event) as Json;
    return {
      kind: "region",
      language: str(region.language),
      source: str(region.source),
      result: error ? null : str(outcome.text) || str(event.result) || null,
      error: error || null,
      compileMs: num(stats.compileMs),
      runMs: num(stats.runMs),
    };
  }
  return null;
}

/** Everything one chunk says, in the order the page should apply it: runtime events first (a
 * rewind happens before the token that follows it), then the text, then the end. */
export function updatesOf(chunk: ChatChunk): StreamUpdate[] {
  const updates: StreamUpdate[] = [];
  for (const event of extensionEvents(chunk.ruffian)) {
    const update = eventUpdate(event);
    if (update) updates.push(update);
  }
  const choice = chunk.choices?.[0];
  const content = choice?.delta?.content ?? "";
  const entries = choice?.logprobs?.content ?? null;
  if (content || (entries && entries.length > 0)) {
    const extras = extensionTokens(chunk.ruffian);
    const tokens =
      entries && entries.length > 0 ? entries.map((e, i) => tokenInfo(e, extras[i])) : null;
    updates.push({ kind: "text", text: content, tokens });
  }
  if (chunk.usage) {
    updates.push({
      kind: "usage",
      promptTokens: chunk.usage.prompt_tokens,
      completionTokens: chunk.usage.completion_tokens,
    });
  }
  if (choice?.finish_reason) updates.push({ kind: "finish", reason: choice.finish_reason });
  return updates;
}
