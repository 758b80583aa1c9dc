// The chat's input loop. On a terminal: a line editor with history for each message, raw key
// reading while the model writes (Ctrl-C stops the generation, any key skips a rewind
// animation, a second Ctrl-C or Ctrl-D leaves). On a pipe: one message or command per line.
import { createInterface } from "node:readline";
import { PassThrough } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import type { ChatSession } from "./session.js";
import type { ChatView } from "./view.js";
import { isSlashCommand, runSlash } from "./slash.js";

/** A line end as a terminal sends it (Enter is \r in raw mode; a paste may carry \n or \r\n). */
const LINE_END = /\r\n|\r|\n/;

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
  // Keys typed while the model writes or a command runs, and the lines of a paste after its
  // first, are kept for the next prompts, as a shell keeps typeahead.
  let typeahead = "";
  const queued: string[] = [];
  const keep = (typed: string) => {
    const lines = (typeahead + typed).split(LINE_END);
    typeahead = lines.pop()!;
    queued.push(...lines);
  };
  for (;;) {
    let line: string | null;
    if (queued.length > 0) {
      line = queued.shift()!;
      io.output.write(prompt + line + "\n");
      history.unshift(line);
    } else {
      const asked = await ask(io, prompt, history, typeahead);
      typeahead = "";
      line = asked.line;
      keep(asked.rest);
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
    keep("");
  }
  io.output.write("\n");
  return 0;
}

/** What the line editor read: the line (null on Ctrl-D, or Ctrl-C on an empty line), and the
 * keys that came after its end in the same burst (a paste), unread. */
interface Asked {
  line: string | null;
  rest: string;
}

/** Reads one line with editing and history. The editor is fed the terminal's keys only up to
 * the first line end: it would echo and then drop whatever followed in the same chunk once the
 * line is answered and it closes, so the rest of a paste goes back to the caller instead. */
function ask(io: ReplIo, prompt: string, history: string[], typeahead: string): Promise<Asked> {
  return new Promise((resolve) => {
    const keys = new PassThrough();
    const decoder = new StringDecoder("utf8");
    let rest = "";
    let lineFed = false;
    const onData = (data: Buffer) => {
      const text = decoder.write(data);
      if (lineFed) {
        rest += text;
        return;
      }
      const end = LINE_END.exec(text);
      if (end === null) {
        keys.write(text);
        return;
      }
      // The rest first: the editor may answer the line as soon as it is written.
      lineFed = true;
      rest += text.slice(end.index + end[0].length);
      keys.write(text.slice(0, end.index + end[0].length));
    };
    const rl = createInterface({
      input: keys,
      output: io.output,
      terminal: true,
      history: [...history],
      historySize: 500,
      prompt,
    });
    let settled = false;
    const finish = (line: string | null) => {
      if (settled) return;
      settled = true;
      const h = (rl as unknown as { history?: string[] }).history;
      if (h) history.splice(0, history.length, ...h);
      rl.close();
      io.input.off("data", onData);
      io.input.setRawMode?.(false);
      io.input.pause();
      resolve({ line, rest });
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
    // The editor's input is a plain stream, so raw mode is set on the terminal here.
    io.input.setRawMode?.(true);
    io.input.on("data", onData);
    io.input.resume();
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
