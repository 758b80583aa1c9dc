// Request bodies of every endpoint as TypeBox schemas: Fastify validates with them (Ajv) and the
// route handlers get their static types from the same objects, so there is one source of truth.
import { Type, type Static } from "typebox";
import { defaultSyntaxes, type RegionSyntax } from "../decode/scanner.js";

/** A syntax's name in requests: "c", "calc", "lisp" for brackets, "fence-c" for fences. */
export function syntaxName(s: RegionSyntax): string {
  return s.kind === "bracket" ? s.tag.toLowerCase() : `fence-${s.language}`;
}

const Integer = (min: number, max?: number) =>
  Type.Integer(max === undefined ? { minimum: min } : { minimum: min, maximum: max });

/** Ruffian's extension: what a plain OpenAI client never sends. */
export const RuffianRequest = Type.Object(
  {
    /** C source whose main() runs before generation (may register hooks). */
    hook: Type.Optional(Type.String()),
    /** Which region syntaxes are live (default all): names from syntaxName(). */
    syntaxes: Type.Optional(
      Type.Array(Type.Union(defaultSyntaxes().map((s) => Type.Literal(syntaxName(s))))),
    ),
    inject: Type.Optional(Type.Boolean()),
    profile: Type.Optional(
      Type.Union([
        Type.Literal("tiny"),
        Type.Literal("small"),
        Type.Literal("medium"),
        Type.Literal("large"),
        Type.Literal("huge"),
      ]),
    ),
    /** Keeps one VM session (functions, globals, memory[]) across the requests that name it. */
    session: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    /** Stream per-token probability and entropy as `ruffian` token events. */
    tokens: Type.Optional(Type.Boolean()),
    /** Control vectors registered at start (`--control-vector NAME=PATH`) applied to this
     * request's sequence only; `scale` defaults to the one given at start. */
    controlVectors: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: Type.String({ minLength: 1 }),
            scale: Type.Optional(Type.Number({ minimum: -1000, maximum: 1000 })),
          },
          { additionalProperties: false },
        ),
        { maxItems: 16 },
      ),
    ),
  },
  { additionalProperties: false },
);

const Stop = Type.Union([Type.String(), Type.Array(Type.String(), { maxItems: 4 }), Type.Null()]);

/** Parameters shared by both completion endpoints. */
const sampling = {
  model: Type.String(),
  max_tokens: Type.Optional(Type.Union([Integer(1), Type.Null()])),
  temperature: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 2 }), Type.Null()])),
  top_p: Type.Optional(Type.Union([Type.Number({ exclusiveMinimum: 0, maximum: 1 }), Type.Null()])),
  seed: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  stop: Type.Optional(Stop),
  n: Type.Optional(Type.Union([Integer(1), Type.Null()])),
  stream: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  stream_options: Type.Optional(
    Type.Union([
      Type.Object({ include_usage: Type.Optional(Type.Boolean()) }, { additionalProperties: true }),
      Type.Null(),
    ]),
  ),
  user: Type.Optional(Type.String()),
  ruffian: Type.Optional(RuffianRequest),
};

export const ChatMessage = Type.Object(
  {
    role: Type.Union([
      Type.Literal("system"),
      Type.Literal("developer"),
      Type.Literal("user"),
      Type.Literal("assistant"),
    ]),
    content: Type.Union([
      Type.String(),
      Type.Array(Type.Object({ type: Type.Literal("text"), text: Type.String() })),
    ]),
    name: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

export const ChatCompletionBody = Type.Object(
  {
    ...sampling,
    messages: Type.Array(ChatMessage, { minItems: 1 }),
    max_completion_tokens: Type.Optional(Type.Union([Integer(1), Type.Null()])),
    logprobs: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    top_logprobs: Type.Optional(Type.Union([Integer(0, 20), Type.Null()])),
  },
  { additionalProperties: true },
);
export type ChatCompletionBody = Static<typeof ChatCompletionBody>;

export const CompletionBody = Type.Object(
  {
    ...sampling,
    prompt: Type.String(),
    /** Legacy completions: the number of alternatives per token (0..5). */
    logprobs: Type.Optional(Type.Union([Integer(0, 5), Type.Null()])),
    echo: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  },
  { additionalProperties: true },
);
export type CompletionBody = Static<typeof CompletionBody>;

export const TokenizeBody = Type.Object(
  {
    content: Type.String(),
    add_special: Type.Optional(Type.Boolean()),
    with_pieces: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type TokenizeBody = Static<typeof TokenizeBody>;

export const DetokenizeBody = Type.Object(
  { tokens: Type.Array(Integer(0)) },
  { additionalProperties: false },
);
export type DetokenizeBody = Static<typeof DetokenizeBody>;

export const ExecBody = Type.Object(
  {
    language: Type.Union([Type.Literal("c"), Type.Literal("lisp"), Type.Literal("calc")]),
    source: Type.String(),
    profile: RuffianRequest.properties.profile,
  },
  { additionalProperties: false },
);
export type ExecBody = Static<typeof ExecBody>;

export type RuffianRequest = Static<typeof RuffianRequest>;
