// A synthetic SentencePiece vocabulary of any size for random-weight test models: control and
// byte-fallback tokens, every printable ASCII character, pieces that code regions are made of
// ("▁[", "];", "▁```", "▁return"), then lowercase n-grams by length until the size is reached.
import { SPACE_PIECE, TokenType, type VocabEntry } from "./vocab.js";
import type { SpmVocabulary } from "./llama-gguf.js";

/** Multi-character pieces a code-writing model's vocabulary has as single tokens (Llama 2's has
 * all of them), so tests can force a region token by token and see a token run past its end. */
const CODE_PIECES = [
  " [",
  "];",
  " ```",
  "```",
  "int",
  " main",
  "()",
  " {",
  " }",
  " return",
  " int",
  "Hello",
  " world",
] as const;

const LETTERS = "abcdefghijklmnopqrstuvwxyz";

/** Every lowercase string of `length` letters, in lexicographic order. */
function* ngrams(length: number): Generator<string> {
  if (length === 0) {
    yield "";
    return;
  }
  for (const head of ngrams(length - 1)) for (const c of LETTERS) yield head + c;
}

/**
 * Builds a vocabulary of exactly `size` tokens. Every multi-character piece comes after all of its
 * prefixes, so llama.cpp's SPM tokenizer (which merges adjacent pieces whose concatenation is a
 * token) can always reach it; scores fall with the id, as in a frequency-ranked vocabulary.
 */
export function syntheticSpmVocabulary(size: number): SpmVocabulary {
  const entries: VocabEntry[] = [
    { text: "<unk>", type: TokenType.unknown },
    { text: "<s>", type: TokenType.control },
    { text: "</s>", type: TokenType.control },
  ];
  for (let b = 0; b < 256; b++) {
    const hex = b.toString(16).toUpperCase().padStart(2, "0");
    entries.push({ text: `<0x${hex}>`, type: TokenType.byte });
  }
  const minimum = entries.length + 1 + 94;
  if (!Number.isInteger(size) || size < minimum) {
    throw new Error(`a synthetic vocabulary needs an integer size ≥ ${minimum}, got ${size}`);
  }
  const seen = new Set<string>();
  const add = (piece: string): void => {
    if (entries.length >= size || seen.has(piece)) return;
    seen.add(piece);
    entries.push({ text: piece, type: TokenType.normal });
  };
  add(SPACE_PIECE);
  for (let c = 33; c <= 126; c++) add(String.fromCharCode(c));
  for (const piece of CODE_PIECES) {
    const spm = piece.replaceAll(" ", SPACE_PIECE);
    for (let end = 2; end <= spm.length; end++) add(spm.slice(0, end));
  }
  // Phase n adds every n-letter word, bare and after a space; their prefixes came in phase n - 1.
  for (let length = 1; entries.length < size; length++) {
    for (const word of ngrams(length)) {
      if (length > 1) add(word);
      add(SPACE_PIECE + word);
      if (entries.length >= size) break;
    }
  }
  const scores = new Float32Array(size);
  for (let id = 0; id < size; id++) scores[id] = -id;
  return { entries, scores, bos: 1, eos: 2, unk: 0, addSpacePrefix: true };
}
