// POST /v1/chat/completions and POST /v1/completions: the decode host plans the request and runs
// one job per choice; their events come back here and the route answers as JSON or as
// server-sent events. A client that goes away cancels its jobs (the slot is freed at the next
// decode step).
import { randomUUID } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { ServerApp, ServerContext } from "../app.js";
import { Choice } from "../choice.js";
import { ApiError } from "../errors.js";
import type { RequestBody, ResponseSink, StartedRequest } from "../decode-host.js";
import {
  chunkBody,
  completionBody,
  textChunkJson,
  usageChunk,
  type Endpoint,
  type ResponseMeta,
} from "../responses.js";
import { ChatCompletionBody, CompletionBody } from "../schemas.js";
import { openEventStream, type EventStream } from "../sse.js";

export function completionRoutes(app: ServerApp, ctx: ServerContext): void {
  app.post("/v1/chat/completions", { schema: { body: ChatCompletionBody } }, (req, reply) => {
    ctx.checkModel(req.body.model);
    return complete(ctx, req, reply, { endpoint: "chat", body: req.body });
  });
  app.post("/v1/completions", { schema: { body: CompletionBody } }, (req, reply) => {
    ctx.checkModel(req.body.model);
    return complete(ctx, req, reply, { endpoint: "text", body: req.body });
  });
}

async function complete(
  ctx: ServerContext,
  req: FastifyRequest,
  reply: FastifyReply,
  request: RequestBody,
): Promise<unknown> {
  const endpoint = request.endpoint;
  const meta: ResponseMeta = {
    id: `${endpoint === "chat" ? "chatcmpl" : "cmpl"}-${randomUUID()}`,
    created: Math.floor(Date.now() / 1000),
    model: ctx.modelId,
    promptTokens: 0,
    cachedTokens: 0,
  };
  let stream: EventStream | undefined;
  let started: StartedRequest | undefined;
  let choices: Choice[] = [];
  let wantLogprobs = false;
  const firstSent = new Set<number>();
  const textOffsets: number[] = [];
  let textChunks: Array<(content: string) => string> = [];
  let failure: Error | undefined;

  /** Choices with text not yet in a chunk: their chunks are made when the stream writes. */
  const unbuilt = new Set<Choice>();
  /** Choices that ended before the stream was open. */
  const endedEarly = new Set<Choice>();
  /** Plain text of an open stream waits for its next write, to leave with what follows it. */
  const textLater = (c: Choice) => {
    unbuilt.add(c);
    stream!.touch();
  };
  const flush = (c: Choice, finished: boolean) => {
    if (!stream) {
      // The decode worker sends a request's acceptance with its first step's events (and a
      // request done at once with its end): they are made into chunks once the stream is open.
      (finished ? endedEarly : unbuilt).add(c);
      return;
    }
    unbuilt.delete(c);
    const delta = c.takeDelta();
    if (
      !finished &&
      !wantLogprobs &&
      delta.events.length === 0 &&
      delta.content !== "" &&
      (endpoint === "text" || firstSent.has(c.index))
    ) {
      stream.sendJson(textChunks[c.index]!(delta.content));
      textOffsets[c.index]! += delta.content.length;
      return;
    }
    const body = chunkBody(endpoint, meta, c, delta, {
      first: endpoint === "chat" && !firstSent.has(c.index),
      finished,
      wantLogprobs,
      textOffset: textOffsets[c.index]!,
    });
    firstSent.add(c.index);
    textOffsets[c.index]! += delta.content.length;
    if (body) stream.send(body);
  };

  let open = 0;
  let resolveFinished: () => void = () => {};
  const finished = new Promise<void>((resolve) => (resolveFinished = resolve));
  const failed = new Set<number>();
  const sink: ResponseSink = {
    begin(request) {
      started = request;
      open = request.n;
      meta.promptTokens = request.promptTokens;
      wantLogprobs = request.logprobs >= 0;
      choices = Array.from(
        { length: request.n },
        (_, i) => new Choice(i, request.stops, wantLogprobs, request.tokenEvents),
      );
      textChunks = choices.map((c) => textChunkJson(endpoint, meta, c));
      for (const _ of choices) textOffsets.push(0);
    },
    event(i, ev) {
      const c = choices[i]!;
      // A rewind erases text the client has, and injected text travels in a chunk of its
      // own (a client tells it from the sampled tokens' text that way): what came before
      // either must be in a chunk first.
      const apart = ev.type === "rewind" || ev.type === "injection";
      if (apart && unbuilt.has(c)) flush(c, false);
      c.handle(ev);
      if (c.failure !== undefined && !failed.has(i)) {
        failed.add(i);
        started!.cancel("error", i);
      }
      if (ev.type === "done") return;
      if (!stream) return flush(c, false);
      // Ruffian's events go out at once; plain text waits for the stream's next write
      // and goes out as one chunk with the text sampled after it.
      if (c.hasPendingEvents || ev.type === "injection") flush(c, false);
      else textLater(c);
    },
    tokens(i, text, count) {
      const c = choices[i]!;
      c.addTokens(text, count);
      if (!stream) return flush(c, false);
      textLater(c);
    },
    end(i, outcome) {
      const c = choices[i]!;
      if ("done" in outcome) {
        if (i === 0) meta.cachedTokens = outcome.reused;
        c.cancelled = outcome.cancelled;
        flush(c, true);
      } else failure ??= outcome.error;
      if (--open === 0) resolveFinished();
    },
  };
  // The host plans the request (sink.begin) and queues its choices; it refuses (400, 503 …)
  // before any event, and then no stream is open yet.
  started = await ctx.host.start(request, sink);

  let clientGone = false;
  reply.raw.on("close", () => {
    if (reply.raw.writableFinished) return;
    clientGone = true;
    started!.cancel("disconnect");
  });
  if (reply.raw.destroyed && !reply.raw.writableFinished) {
    // The client left while the request was being planned.
    clientGone = true;
    started.cancel("disconnect");
  }
  if (started.stream) {
    stream = openEventStream(reply, ctx.limits.streamIntervalMs, () => {
      for (const c of unbuilt) flush(c, false);
    });
    for (const c of choices) if (endedEarly.has(c) || unbuilt.has(c)) flush(c, endedEarly.has(c));
  }
  await finished;
  const hookFailure = choices.find((c) => c.failure !== undefined)?.failure;
  const error =
    failure instanceof ApiError
      ? failure
      : failure
        ? new ApiError(500, `generation failed: ${failure.message}`, "server_error")
        : hookFailure !== undefined
          ? new ApiError(422, hookFailure, "vm_error", "ruffian.hook", "hook_failed")
          : undefined;
  if (stream) {
    if (error) stream.send(error.body());
    else if (started.includeUsage) stream.send(usageChunk(endpoint, meta, choices));
    stream.end();
    return reply;
  }
  if (clientGone) return reply;
  if (error) throw error;
  return completionBody(endpoint, meta, choices, wantLogprobs);
}
