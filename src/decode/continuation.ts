// Tokenizes text that continues a sequence (injected results), undoing the space that
// SentencePiece tokenizers put in front of a text's first word when it is tokenized on its own.
import type { Engine } from "../engine/types.js";

const vocabularies = new WeakMap<Engine, Map<string, number>>();

/** Token text → id for the whole vocabulary, built once per engine. */
function vocabulary(engine: Engine): Map<string, number> {
  let map = vocabularies.get(engine);
  if (!map) {
    map = new Map();
    for (let id = 0; id < engine.capabilities.nVocab; id++) {
      if (engine.isControl(id)) continue;
      const text = engine.tokenText(id);
      if (text && !map.has(text)) map.set(text, id);
    }
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
