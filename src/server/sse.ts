// Server-sent events in OpenAI's streaming format: `data: {json}` per chunk, ending with
// `data: [DONE]`. Fastify hands the raw response over (hijack) so chunks go out as they are made.
import type { FastifyReply } from "fastify";

export interface EventStream {
  send(body: unknown): void;
  end(): void;
}

const jsonSafe = (_k: string, v: unknown): unknown => (typeof v === "bigint" ? v.toString() : v);

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
  // Chunks made while the decode loop runs (it yields every few ms) leave in one write.
  let corked = false;
  const uncork = () => {
    corked = false;
    raw.uncork();
  };
  return {
    send(body) {
      if (!writable()) return;
      if (!corked) {
        corked = true;
        raw.cork();
        setImmediate(uncork);
      }
      raw.write(`data: ${JSON.stringify(body, jsonSafe)}\n\n`);
    },
    end() {
      if (writable()) raw.end("data: [DONE]\n\n");
    },
  };
}
