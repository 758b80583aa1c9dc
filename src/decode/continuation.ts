// Tokenizes text that continues a sequence (injected results), undoing the space that
// SentencePiece tokenizers put in front of a text's first word when it is tokenized on its own.
import type { Engine } from "../engine/types.js";

const vocabularies = new WeakMap<Engine, Map<string, number>>();

/**
 * Where a SentencePiece vocabulary's byte-fallback table starts (<0x00> … <0xFF>: 256 ids in
 * byte order, near the start), or -1. Those tokens print as the bare byte, so "]" or "e" also
 * names a byte token, which the tokenizer itself never uses where a piece of that text exists.
 */
function byteFallbackStart(engine: Engine): number {
  const n = engine.capabilities.nVocab;
  for (let id = 0; id < 1024 && id + 256 <= n; id++) {
    const b = engine.tokenBytes(id);
    if (b.length !== 1 || b[0] !== 0) continue;
    let run = true;
    for (let i = 1; i < 256 && run; i++) {
      const c = engine.tokenBytes(id + i);
      run = c.length === 1 && c[0] === i;
    }
    if (run) return id;
  }
  return -1;
}

/** Token text → id for the whole vocabulary, built once per engine: the first id of each text,
 * a byte-fallback token only where no other token has its text. */
function vocabulary(engine: Engine): Map<string, number> {
  let map = vocabularies.get(engine);
  if (!map) {
    map = new Map();
    const bytes = byteFallbackStart(engine);
    const add = (id: number): void => {
      if (engine.isControl(id)) return;
      const text = engine.tokenText(id);
      if (text && !map!.has(text)) map!.set(text, id);
    };
    for (let id = 0; id < engine.capabilities.nVocab; id++)
      if (bytes < 0 || id < bytes || id >= bytes + 256) add(id);
    if (bytes >= 0) for (let id = bytes; id < bytes + 256; id++) add(id);
    vocabularies.set(engine, map);
  }
  return map;
}

/** Tokens whose texts concatenate to exactly `text`, as they would follow earlier tokens. */
export function continuationTokens(engine: Engine, text: string): number[] {
  if (text.length === 0) return [];
  const tokens = engine.tokenize(text, { addSpecial: false });
  const joined = tokens.map((t) => engine.tokenText(t)).join("");
  if (joined === text || joined !== " " + text || tokens.length === 0) return tokens;
  // The tokenizer added a leading space: drop it, or split it off the merged first token.
  const first = engine.tokenText(tokens[0]!);
  if (first === " ") return tokens.slice(1);
  const rest = first.slice(1);
  const vocab = vocabulary(engine);
  const whole = vocab.get(rest);
  if (whole !== undefined) return [whole, ...tokens.slice(1)];
  const pieces: number[] = [];
  for (const ch of rest) {
    const id = vocab.get(ch);
    if (id === undefined) return tokens;
    pieces.push(id);
  }
  return [...pieces, ...tokens.slice(1)];
}
