// The chat's slash commands: run C in the session's VM, load hooks, save and load the chat,
// show statistics and the model, and leave.
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import type { ChatSession } from "./session.js";
import type { ChatView } from "./view.js";
import { loadTranscript, saveTranscript } from "./transcript.js";
import { formatBytes } from "../commands/models.js";
import { statSync } from "node:fs";

export const HELP = `Commands:
  /exec CODE     run C in the chat's VM (the session the model's [C: …] regions use)
  /hook FILE.c   load a hook program: its main() runs before the next generation
  /hook off      drop a hook program that has not run yet
  /hooks         hooks in play and their steps left
  /reset         forget the conversation and start a fresh VM
  /save FILE     save the conversation and the VM session (JSON)
  /load FILE     load a saved chat (replays its VM blocks, restores memory[])
  /stats         token, VM and rewind counts for this chat
  /model         the model and how prompts are written for it
  /help          this list
  /quit          leave (also Ctrl-D; Ctrl-C stops a generation, a second one leaves)`;

export type SlashOutcome = "continue" | "quit";

export function isSlashCommand(line: string): boolean {
  return /^\/[a-z]/i.test(line.trimStart());
}

export function runSlash(line: string, session: ChatSession, view: ChatView): SlashOutcome {
  const text = line.trim();
  const space = text.search(/\s/);
  const name = (space < 0 ? text : text.slice(0, space)).toLowerCase();
  const arg = space < 0 ? "" : text.slice(space + 1).trim();
  switch (name) {
    case "/help":
    case "/?":
      view.info(HELP);
      return "continue";
    case "/quit":
    case "/exit":
    case "/q":
      return "quit";
    case "/exec":
      if (arg === "") view.error("usage: /exec CODE   (for example /exec 6*7)");
      else view.vmOutcome(session.exec(arg));
      return "continue";
    case "/hook":
      hookCommand(arg, session, view);
      return "continue";
    case "/hooks":
      hooksCommand(session, view);
      return "continue";
    case "/reset":
      session.reset();
      view.note("conversation and VM reset");
      return "continue";
    case "/save": {
      if (arg === "") {
        view.error("usage: /save FILE");
        return "continue";
      }
      try {
        const saved = saveTranscript(session, arg);
        view.note(
          `saved ${saved.messages.length} messages and ${saved.vm.blocks.length} VM blocks to ${arg}`,
        );
      } catch (err) {
        view.error(`cannot save to ${arg}: ${(err as Error).message}`);
      }
      return "continue";
    }
    case "/load": {
      if (arg === "") {
        view.error("usage: /load FILE");
        return "continue";
      }
      try {
        const r = loadTranscript(session, arg);
        view.note(`loaded ${r.messages} messages and replayed ${r.blocks} VM blocks from ${arg}`);
        for (const p of r.problems) view.error(`  ${p}`);
      } catch (err) {
        view.error((err as Error).message);
      }
      return "continue";
    }
    case "/stats":
      statsCommand(session, view);
      return "continue";
    case "/model":
      modelCommand(session, view);
      return "continue";
    default:
      view.error(`unknown command ${name} (try /help)`);
      return "continue";
  }
}

function hookCommand(arg: string, session: ChatSession, view: ChatView): void {
  if (arg === "") {
    view.error("usage: /hook FILE.c   (or /hook off)");
    return;
  }
  if (arg === "off") {
    const had = session.pendingHook;
    session.pendingHook = undefined;
    view.note(had ? `dropped ${had.file}` : "no hook program was waiting");
    return;
  }
  let source: string;
  try {
    source = readFileSync(arg, "utf8");
  } catch (err) {
    view.error(
      `cannot read hook program ${arg}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
    return;
  }
  if (!/\bmain\s*\(/.test(source)) {
    view.error(
      `${arg} has no main(): a hook program's main() arms its hooks with hook_set(name, steps)`,
    );
    return;
  }
  try {
    session.loadHook(arg, source);
  } catch (err) {
    view.error((err as Error).message);
    return;
  }
  view.note(`hook program ${basename(arg)} loaded: its main() runs before your next message`);
}

function hooksCommand(session: ChatSession, view: ChatView): void {
  const t = view.tone;
  const lines: string[] = [];
  if (session.pendingHook)
    lines.push(`waiting: ${session.pendingHook.file} (runs before the next generation)`);
  if (session.hooks.size > 0) {
    lines.push("hooks of the last generation:");
    for (const h of session.hooks.values())
      lines.push(`  ${h.name}  ${h.stepsLeft} steps left, called ${h.calls} times`);
  }
  if (lines.length === 0) lines.push("no hooks (load a program with /hook FILE.c)");
  view.info(lines.map((l) => t.magenta(l)).join("\n"));
}

function statsCommand(session: ChatSession, view: ChatView): void {
  const s = session.totals;
  const rate = s.generationMs > 0 ? (s.sampledTokens * 1000) / s.generationMs : 0;
  const last = session.last;
  const lines = [
    `turns          ${s.turns}`,
    `tokens         ${s.sampledTokens} sampled, ${s.injectedTokens} injected (${rate.toFixed(1)} tok/s overall)`,
    `VM             ${s.vmCalls} calls in generations, ${s.execs} /exec, ${session.blocks.length} blocks in the session`,
    `hooks          ${s.hookCalls} calls`,
    `rewinds        ${s.rewinds}`,
  ];
  if (last) {
    lines.push(
      `last answer    ${last.stats.sampledTokens} tokens, ${last.stats.tokensPerSecond.toFixed(1)} tok/s, ` +
        `${last.stats.promptTokens} prompt tokens, ended by ${last.reason}`,
    );
  }
  if (Number.isFinite(session.lastEntropy))
    lines.push(`last entropy   ${session.lastEntropy.toFixed(3)} nats`);
  if (session.droppedTurns > 0)
    lines.push(`context        ${session.droppedTurns} oldest messages left out to fit`);
  view.info(lines.join("\n"));
}

function modelCommand(session: ChatSession, view: ChatView): void {
  const m = session.engine.model;
  const c = session.engine.capabilities;
  let size = "";
  try {
    size = formatBytes(statSync(m.path).size);
  } catch {
    size = "?";
  }
  const style = {
    nano: "ruffian-nano Q:/A: format (knows [C: …] already)",
    "chat-template": "the model's chat template, with the built-in system prompt",
    plain: "plain continuation (no chat template)",
  }[session.style];
  view.info(
    [
      `model          ${m.path} (${size})`,
      `architecture   ${m.architecture} — ${m.description}`,
      `prompts        ${style}`,
      `context        ${c.contextSize} tokens, vocabulary ${c.nVocab}, ${c.nLayer} layers`,
      `backend        ${c.backend}, ${c.threads} thread${c.threads === 1 ? "" : "s"}`,
      `generation     up to ${session.settings.maxTokens} tokens, temperature ${session.settings.sampling.temperature ?? 0}`,
    ].join("\n"),
  );
}
