// Readers that hold a view of llama.cpp's logits buffer without copying it yet (the decode
// loop's deferred copy, src/decode/vocab-kernels.ts, where the native statistics pass copies
// the logits while it reads them). Every llama_decode overwrites that buffer in place, and
// freeing the context frees it: the engine calls settleLogitReaders() first, so each reader
// copies what it still needs. Without this a hook's vm_lookahead (scratch decodes before the
// step's first read) made the step sample from the lookahead's logits.

/** A reader of the engine's logits that has not copied them yet. */
export interface LogitReader {
  /** Copies the logits it holds a view of, now. */
  settle(): void;
}

const pending = new Set<LogitReader>();

/** Registers a reader until it has copied its logits (or settleLogitReaders makes it). */
export function holdLogits(reader: LogitReader): void {
  pending.add(reader);
}

/** The reader has copied its logits (or given them up): nothing to do before the next decode. */
export function releaseLogits(reader: LogitReader): void {
  pending.delete(reader);
}

/** Lets every holding reader copy its logits; called before the buffer is overwritten or freed. */
export function settleLogitReaders(): void {
  if (pending.size === 0) return;
  const readers = [...pending];
  pending.clear();
  for (const r of readers) r.settle();
}
