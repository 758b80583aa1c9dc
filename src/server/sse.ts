// Server-sent events in OpenAI's streaming format: `data: {json}` per chunk, ending with
// `data: [DONE]`. Fastify hands the raw response over (hijack) so chunks go out as they are made.
import type { FastifyReply } from "fastify";
import { toJson } from "../json.js";

export interface EventStream {
  /** Queues one chunk; it leaves with the stream's next write. */
  send(body: unknown): void;
  /** Queues one chunk already in JSON. */
  sendJson(json: string): void;
  /** Says that the stream's `build` has something to queue: it runs right before the next
   * write, so text that arrives token by token within one write's window becomes one chunk. */
  touch(): void;
  /** Writes what is queued (after a last `build`) and `data: [DONE]`, and ends the response. */
  end(): void;
}

/**
 * A stream writes to its socket at most once per this many milliseconds (`--stream-interval`):
 * the first chunk after a quiet spell leaves at once (time to first token is not delayed), what
 * is made within the window after it leaves together, as one chunk of text. Each write is a
 * syscall that also carries the loopback TCP work, on the decode loop's thread: with 16 streams
 * it was the largest cost after the decode itself (docs/benchmarks.md#server), and text that
 * arrives 20 times a second still reads as a stream.
 */
export const DEFAULT_STREAM_INTERVAL_MS = 50;

/** `build` queues (with `send`) whatever `touch` announced; it may be called with nothing new. */
export function openEventStream(
  reply: FastifyReply,
  intervalMs: number,
  build: () => void = () => {},
): EventStream {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
    "x-accel-buffering": "no",
  });
  // The headers leave with the first chunk (the first token, or an error): one write, not two.
  const writable = () => !raw.destroyed && !raw.writableEnded;
  let pending = "";
  let touched = false;
  let timer: NodeJS.Timeout | undefined;
  let lastWrite = -Infinity;
  /** While a write gathers what `build` queues, sending must not schedule another write. */
  let collecting = false;
  const collect = () => {
    if (!touched) return;
    touched = false;
    collecting = true;
    try {
      build();
    } finally {
      collecting = false;
    }
  };
  const flush = () => {
    timer = undefined;
    lastWrite = performance.now();
    collect();
    if (pending !== "" && writable()) raw.write(pending);
    pending = "";
  };
  const schedule = () => {
    if (timer || collecting) return;
    const quiet = performance.now() - lastWrite;
    if (quiet >= intervalMs) flush();
    else timer = setTimeout(flush, intervalMs - quiet);
  };
  const sendJson = (json: string) => {
    if (!writable()) return;
    pending += `data: ${json}\n\n`;
    schedule();
  };
  return {
    send: (body) => sendJson(toJson(body)),
    sendJson,
    touch() {
      if (!writable()) return;
      touched = true;
      schedule();
    },
    end() {
      if (timer) clearTimeout(timer);
      timer = undefined;
      collect();
      if (writable()) raw.end(`${pending}data: [DONE]\n\n`);
      pending = "";
    },
  };
}
