// The engine's error type: one class with a machine-readable code, so callers (CLI, server,
// decode loop) can tell a bad model file from a full context without parsing messages.

export type EngineErrorCode =
  | "model-not-found"
  | "not-gguf"
  | "model-load"
  | "unsupported-model"
  | "context-create"
  | "context-full"
  | "decode"
  | "argument"
  | "chat-template"
  | "observer"
  | "disposed"
  /** A context call while decodeAsync runs (a programming error: await the decode first). */
  | "busy";

export class EngineError extends Error {
  constructor(
    readonly code: EngineErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "EngineError";
  }
}
