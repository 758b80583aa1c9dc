// Makes a real model write exactly the tokens a test wants: a hook raises each forced token's
// logit far above the rest, one per sampling step, and the real decode loop does everything else
// (scanning, VM, injection, cutting a token that runs past a region).
import assert from "node:assert/strict";
import { DecodeLoop, type GenerationRequest } from "../../src/decode/loop.js";
import type { DecodeEvent } from "../../src/decode/events.js";
import type { Engine } from "../../src/engine/types.js";

/** Token id of every distinct (non-control) token text of the engine's vocabulary. */
export function tokenIds(engine: Engine): Map<string, number> {
  const ids = new Map<string, number>();
  for (let id = 0; id < engine.capabilities.nVocab; id++) {
    const t = engine.tokenText(id);
    if (!ids.has(t) && !engine.isControl(id)) ids.set(t, id);
  }
  return ids;
}

/** The C hook program forcing `ids` from the first step on. */
export function forcingHook(ids: readonly number[]): string {
  return `
int ids[] = {${ids.join(", ")}};
int at = 0;
void force(int step) { if (at < ${ids.length}) { logit_set(ids[at], logit_get(logit_argmax()) + 100000); at++; } }
int main() { hook_set("force", ${ids.length}); return 0; }`;
}

/** Runs the loop with the model forced to write `pieces` (each one token) and returns events. */
export async function forcedRun(
  engine: Engine,
  pieces: readonly string[],
  vocab = tokenIds(engine),
): Promise<DecodeEvent[]> {
  const ids = pieces.map((p) => {
    const id = vocab.get(p);
    assert.ok(id !== undefined, `no single token ${JSON.stringify(p)}`);
    return id;
  });
  return forcedTokens(engine, ids);
}

/** Runs the loop with the model forced to write the token ids, then one token of its own;
 * `request` may set the prompt, stop strings and the rest of the request. */
export async function forcedTokens(
  engine: Engine,
  ids: readonly number[],
  request: Partial<GenerationRequest> = {},
): Promise<DecodeEvent[]> {
  const events: DecodeEvent[] = [];
  for await (const ev of new DecodeLoop(engine).run([
    { prompt: "Hello", maxTokens: ids.length + 1, hook: forcingHook(ids), ...request },
  ]))
    events.push(ev);
  return events;
}

export function finalText(events: readonly DecodeEvent[]): string {
  const done = events.find((e) => e.type === "done");
  assert.ok(done && done.type === "done");
  return done.text;
}
