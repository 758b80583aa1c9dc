// /save and /load: a chat written to a JSON file — the conversation, the C blocks whose
// definitions make up the VM session (replayed on load) and the memory[] ints.
import { readFileSync, writeFileSync } from "node:fs";
import type { ChatMessage } from "../../engine/types.js";
import type { ChatSession, VmBlock } from "./session.js";

export const TRANSCRIPT_FORMAT = "ruffian-chat/1";

export interface Transcript {
  format: typeof TRANSCRIPT_FORMAT;
  model: string;
  savedAt: string;
  messages: ChatMessage[];
  vm: { blocks: VmBlock[]; memory: number[] };
}

export function saveTranscript(session: ChatSession, file: string): Transcript {
  const transcript: Transcript = {
    format: TRANSCRIPT_FORMAT,
    model: session.engine.model.path,
    savedAt: new Date().toISOString(),
    messages: session.messages,
    vm: { blocks: session.blocks, memory: Array.from(session.live.session.memory) },
  };
  writeFileSync(file, JSON.stringify(transcript, null, 2) + "\n");
  return transcript;
}

export interface LoadResult {
  messages: number;
  blocks: number;
  /** Blocks that no longer compiled or ran cleanly when replayed, with the reason. */
  problems: string[];
}

/** Replaces the session's conversation and VM with the file's; the file is checked first. */
export function loadTranscript(session: ChatSession, file: string): LoadResult {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new Error(`cannot read ${file}: ${(err as Error).message}`);
  }
  const t = validate(data, file);
  session.reset();
  const problems: string[] = [];
  for (const [i, block] of t.vm.blocks.entries()) {
    // Replaying re-creates functions and globals; model intrinsics fail outside a generation,
    // which is expected for region code that read the logits, so only compile errors count.
    const outcome = session.live.session.run(block.source);
    if (!outcome.ok && (outcome.error.kind === "syntax" || outcome.error.kind === "type")) {
      problems.push(`block ${i + 1}: ${outcome.error.message}`);
    } else {
      session.blocks.push(block);
    }
  }
  session.live.session.memory.set(t.vm.memory.slice(0, session.live.session.memory.length));
  session.messages = t.messages.map((m) => ({ role: m.role, content: m.content }));
  return { messages: t.messages.length, blocks: t.vm.blocks.length, problems };
}

function validate(data: unknown, file: string): Transcript {
  const bad = (why: string) => new Error(`${file} is not a saved ruffian chat: ${why}`);
  if (typeof data !== "object" || data === null) throw bad("not a JSON object");
  const t = data as Partial<Transcript>;
  if (t.format !== TRANSCRIPT_FORMAT) throw bad(`format is ${JSON.stringify(t.format)}`);
  if (!Array.isArray(t.messages)) throw bad("no messages list");
  for (const m of t.messages) {
    if (typeof m?.role !== "string" || typeof m?.content !== "string")
      throw bad("a message lacks a role or content");
  }
  if (!t.vm || !Array.isArray(t.vm.blocks) || !Array.isArray(t.vm.memory))
    throw bad("no vm blocks or memory");
  for (const b of t.vm.blocks) {
    if (typeof b?.source !== "string") throw bad("a VM block has no source");
  }
  if (!t.vm.memory.every((x) => Number.isInteger(x))) throw bad("memory holds non-integers");
  return t as Transcript;
}
