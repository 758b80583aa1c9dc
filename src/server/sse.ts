// Server-sent events in OpenAI's streaming format: `data: {json}` per chunk, ending with
// `data: [DONE]`. Fastify hands the raw response over (hijack) so chunks go out as they are made.
import type { FastifyReply } from "fastify";
import { toJson } from "../json.js";

export interface EventStream {
  send(body: unknown): void;
  end(): void;
}

/**
 * A stream writes to its socket at most once per this many milliseconds: the first chunk after
 * a quiet spell leaves at once (time to first token is not delayed), chunks made within the
 * window after it leave together in one write. A write per token was the server's largest cost
 * after the decode itself (a syscall each), and a reader cannot tell 20 ms apart.
 */
const COALESCE_MS = 20;

export function openEventStream(reply: FastifyReply): EventStream {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
    "x-accel-buffering": "no",
  });
  raw.flushHeaders();
  const writable = () => !raw.destroyed && !raw.writableEnded;
  let pending = "";
  let timer: NodeJS.Timeout | undefined;
  let lastWrite = -Infinity;
  const flush = () => {
    timer = undefined;
    lastWrite = performance.now();
    if (pending !== "" && writable()) raw.write(pending);
    pending = "";
  };
  return {
    send(body) {
      if (!writable()) return;
      pending += `data: ${toJson(body)}\n\n`;
      if (timer) return;
      const quiet = performance.now() - lastWrite;
      if (quiet >= COALESCE_MS) flush();
      else timer = setTimeout(flush, COALESCE_MS - quiet);
    },
    end() {
      if (timer) clearTimeout(timer);
      timer = undefined;
      if (writable()) raw.end(`${pending}data: [DONE]\n\n`);
      pending = "";
    },
  };
}
