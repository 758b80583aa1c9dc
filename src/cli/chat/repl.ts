// The chat's input loop. On a terminal: a line editor with history for each message, raw key
// reading while the model writes (Ctrl-C stops the generation, any key skips a rewind
// animation, a second Ctrl-C or Ctrl-D leaves). On a pipe: one message or command per line.
import { createInterface } from "node:readline";
import type { ChatSession } from "./session.js";
import type { ChatView } from "./view.js";
import { isSlashCommand, runSlash } from "./slash.js";

export interface ReplIo {
  input: NodeJS.ReadStream;
  output: NodeJS.WriteStream;
}

/** Sends one message and shows the generation; false when the turn failed (an error, or the
 * context filled up before the answer ended), which a scripted chat reports in its exit status. */
async function converse(
  text: string,
  session: ChatSession,
  view: ChatView,
  signal: AbortSignal,
): Promise<boolean> {
  view.turnStarted(session);
  try {
    const done = await session.send(text, (ev) => view.event(ev, session), signal);
    view.turnEnded(done, session);
    return done.reason !== "context-full";
  } catch (err) {
    view.error(`ruffian: ${(err as Error).message}`);
    return false;
  }
}

/** Interactive loop on a terminal; returns the exit code. */
export async function ttyLoop(session: ChatSession, view: ChatView, io: ReplIo): Promise<number> {
  const history: string[] = [];
  const prompt = view.tone.bold(view.tone.cyan("› "));
  // Keys typed while the model writes are kept for the next prompt, as a shell keeps typeahead.
  let typeahead = "";
  const queued: string[] = [];
  for (;;) {
    let line: string | null;
    if (queued.length > 0) {
      line = queued.shift()!;
      io.output.write(prompt + line + "\n");
      history.unshift(line);
    } else {
      line = await ask(io, prompt, history, typeahead);
      typeahead = "";
    }
    if (line === null) break;
    const text = line.trim();
    if (text === "") continue;
    if (isSlashCommand(text)) {
      if (runSlash(text, session, view) === "quit") break;
      continue;
    }
    const stop = new AbortController();
    let leave = false;
    const onKey = (data: Buffer) => {
      for (const byte of data) {
        if (byte === 0x03 || byte === 0x04) {
          if (stop.signal.aborted) leave = true;
          stop.abort();
        }
      }
      typeahead += data.toString("utf8").replace(/[\x03\x04]/g, "");
      view.skip();
    };
    io.input.setRawMode?.(true);
    io.input.on("data", onKey);
    io.input.resume();
    try {
      await converse(line, session, view, stop.signal);
    } finally {
      io.input.off("data", onKey);
      io.input.setRawMode?.(false);
      io.input.pause();
    }
    if (leave) break;
    const typed = typeahead.split(/\r\n|\r|\n/);
    typeahead = typed.pop()!;
    queued.push(...typed);
  }
  io.output.write("\n");
  return 0;
}

/** Reads one line with editing and history; null on Ctrl-D, or Ctrl-C on an empty line. */
function ask(
  io: ReplIo,
  prompt: string,
  history: string[],
  typeahead: string,
): Promise<string | null> {
  return new Promise((resolve) => {
    const rl = createInterface({
      input: io.input,
      output: io.output,
      terminal: true,
      history: [...history],
      historySize: 500,
      prompt,
    });
    let settled = false;
    const finish = (value: string | null) => {
      if (settled) return;
      settled = true;
      const h = (rl as unknown as { history?: string[] }).history;
      if (h) history.splice(0, history.length, ...h);
      rl.close();
      resolve(value);
    };
    rl.on("line", (line) => finish(line));
    rl.on("SIGINT", () => {
      if (rl.line !== "") {
        // Ctrl-C on a line being typed clears it, as shells do.
        rl.write(null, { ctrl: true, name: "e" });
        rl.write(null, { ctrl: true, name: "u" });
      } else finish(null);
    });
    rl.on("close", () => finish(null));
    rl.prompt();
    if (typeahead !== "") rl.write(typeahead);
  });
}

/** Scripted loop over piped lines; returns the exit code: 1 when any turn failed, 130 when
 * interrupted. */
export async function pipeLoop(session: ChatSession, view: ChatView, io: ReplIo): Promise<number> {
  const rl = createInterface({ input: io.input, terminal: false, crlfDelay: Infinity });
  let current: AbortController | undefined;
  let quitting = false;
  let failed = false;
  const onSigint = () => {
    if (current && !current.signal.aborted) current.abort();
    else {
      quitting = true;
      rl.close();
    }
  };
  process.on("SIGINT", onSigint);
  try {
    for await (const line of rl) {
      if (quitting) break;
      const text = line.trim();
      if (text === "") continue;
      if (isSlashCommand(text)) {
        if (runSlash(text, session, view) === "quit") break;
        continue;
      }
      current = new AbortController();
      if (!(await converse(line, session, view, current.signal))) failed = true;
      current = undefined;
    }
  } finally {
    process.off("SIGINT", onSigint);
    rl.close();
  }
  return quitting ? 130 : failed ? 1 : 0;
}
