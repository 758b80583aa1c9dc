// ruffian-nano's vocabulary: one token per printable ASCII character (so every digit is its own
// token), plus SentencePiece-style control and byte-fallback tokens that llama.cpp's "llama" tokenizer expects.

/** llama.cpp token types (llama_token_type in the pinned llama.h). */
export const TokenType = { normal: 1, unknown: 2, control: 3, byte: 6 } as const;

export interface VocabEntry {
  text: string;
  type: number;
}

/** SentencePiece writes spaces as U+2581; llama.cpp's SPM tokenizer escapes and unescapes them. */
export const SPACE_PIECE = "\u2581";

export const UNK_ID = 0;
export const BOS_ID = 1;
export const EOS_ID = 2;

function build(): VocabEntry[] {
  const entries: VocabEntry[] = [
    { text: "<unk>", type: TokenType.unknown },
    { text: "<s>", type: TokenType.control },
    { text: "</s>", type: TokenType.control },
  ];
  for (let b = 0; b < 256; b++) {
    entries.push({
      text: `<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`,
      type: TokenType.byte,
    });
  }
  entries.push({ text: "\n", type: TokenType.normal });
  entries.push({ text: SPACE_PIECE, type: TokenType.normal });
  for (let c = 33; c <= 126; c++)
    entries.push({ text: String.fromCharCode(c), type: TokenType.normal });
  return entries;
}

export const NANO_VOCAB: readonly VocabEntry[] = build();

const idOf = new Map(NANO_VOCAB.map((e, i) => [e.text, i]));

/** The token ids llama.cpp will produce for `text` (no BOS): characters map one to one, anything
 * else falls back to its UTF-8 bytes. The training script uses the exported table of the same map. */
export function encodeNano(text: string): number[] {
  const ids: number[] = [];
  for (const ch of text) {
    const id = idOf.get(ch === " " ? SPACE_PIECE : ch);
    if (id !== undefined) ids.push(id);
    else for (const byte of Buffer.from(ch, "utf8")) ids.push(3 + byte);
  }
  return ids;
}
