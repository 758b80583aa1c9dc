// POST /v1/chat/completions and POST /v1/completions: plan the request, submit one job per
// choice to the scheduler, and answer as JSON or as server-sent events. A client that goes away
// cancels its jobs (the slot is freed at the next decode step).
import { randomUUID } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { ServerApp, ServerContext } from "../app.js";
import { Choice } from "../choice.js";
import { ApiError } from "../errors.js";
import { planChat, planCompletion, type RequestPlan } from "../request-plan.js";
import {
  chunkBody,
  completionBody,
  textChunkJson,
  usageChunk,
  type Endpoint,
  type ResponseMeta,
} from "../responses.js";
import { ChatCompletionBody, CompletionBody } from "../schemas.js";
import type { Ticket } from "../scheduler.js";
import { openEventStream, type EventStream } from "../sse.js";

export function completionRoutes(app: ServerApp, ctx: ServerContext): void {
  app.post("/v1/chat/completions", { schema: { body: ChatCompletionBody } }, (req, reply) => {
    ctx.checkModel(req.body.model);
    return complete(ctx, req, reply, "chat", planChat(ctx, req.body));
  });
  app.post("/v1/completions", { schema: { body: CompletionBody } }, (req, reply) => {
    ctx.checkModel(req.body.model);
    return complete(ctx, req, reply, "text", planCompletion(ctx, req.body));
  });
}

async function complete(
  ctx: ServerContext,
  req: FastifyRequest,
  reply: FastifyReply,
  endpoint: Endpoint,
  plan: RequestPlan,
): Promise<unknown> {
  if (plan.session !== undefined && plan.n > 1)
    throw new ApiError(
      400,
      "a request with ruffian.session must have n = 1",
      "invalid_request_error",
      "n",
    );
  const meta: ResponseMeta = {
    id: `${endpoint === "chat" ? "chatcmpl" : "cmpl"}-${randomUUID()}`,
    created: Math.floor(Date.now() / 1000),
    model: ctx.modelId,
    promptTokens: plan.promptTokens.length,
    cachedTokens: 0,
  };
  const wantLogprobs = plan.logprobs >= 0;
  const stops = plan.request.stop ?? [];
  const choices = Array.from(
    { length: plan.n },
    (_, i) => new Choice(i, stops, wantLogprobs, plan.tokenEvents),
  );
  const session =
    plan.session !== undefined
      ? ctx.sessions.acquire(plan.session, plan.request.profile ?? ctx.limits.defaultProfile)
      : undefined;
  let stream: EventStream | undefined;
  const firstSent = new Set<number>();
  const textOffsets = choices.map(() => 0);
  const tickets: Ticket[] = [];
  let failure: Error | undefined;

  /** Choices with text not yet in a chunk: their chunks are made when the stream writes. */
  const unbuilt = new Set<Choice>();
  const textChunks = choices.map((c) => textChunkJson(endpoint, meta, c));
  const flush = (c: Choice, finished: boolean) => {
    if (!stream) return;
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

  const finished = new Promise<void>((resolve) => {
    let open = plan.n;
    const end = () => {
      if (--open === 0) resolve();
    };
    try {
      for (const c of choices) {
        const seedOffset = c.index;
        const ticket = ctx.scheduler.submit({
          request: {
            ...plan.request,
            sampling: {
              ...plan.request.sampling,
              seed: (plan.request.sampling?.seed ?? 0) + seedOffset,
            },
          },
          promptTokens: plan.promptTokens,
          session,
          deadlineMs: ctx.limits.deadlineMs,
          onEvent: (ev) => {
            // A rewind erases text the client has, and injected text travels in a chunk of its
            // own (a client tells it from the sampled tokens' text that way): what came before
            // either must be in a chunk first.
            const apart = ev.type === "rewind" || ev.type === "injection";
            if (apart && unbuilt.has(c)) flush(c, false);
            c.handle(ev);
            if (c.failure !== undefined && !ticket.cancelled) ctx.scheduler.cancel(ticket, "error");
            if (ev.type === "done" || !stream) return;
            // Ruffian's events go out at once; plain text waits for the stream's next write
            // and goes out as one chunk with the text sampled after it.
            if (c.hasPendingEvents || ev.type === "injection") flush(c, false);
            else {
              unbuilt.add(c);
              stream.touch();
            }
          },
          onEnd: (outcome) => {
            if (c.index === 0) meta.cachedTokens = ticket.reused;
            if ("done" in outcome) c.cancelled = outcome.cancelled;
            if ("error" in outcome) failure ??= outcome.error;
            else flush(c, true);
            end();
          },
        });
        tickets.push(ticket);
      }
    } catch (err) {
      for (const t of tickets) ctx.scheduler.cancel(t, "error");
      failure = err as Error;
      resolve();
    }
  });
  // The first submit may already have failed (queue full): answer it before any stream opens.
  if (tickets.length === 0 && failure) {
    if (session) ctx.sessions.release(plan.session!);
    throw failure;
  }
  let clientGone = false;
  reply.raw.on("close", () => {
    if (reply.raw.writableFinished) return;
    clientGone = true;
    for (const t of tickets) ctx.scheduler.cancel(t, "disconnect");
  });
  if (plan.stream)
    stream = openEventStream(reply, ctx.limits.streamIntervalMs, () => {
      for (const c of unbuilt) flush(c, false);
    });
  try {
    await finished;
  } finally {
    if (session) ctx.sessions.release(plan.session!);
  }
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
    else if (plan.includeUsage) stream.send(usageChunk(endpoint, meta, choices));
    stream.end();
    return reply;
  }
  if (clientGone) return reply;
  if (error) throw error;
  return completionBody(endpoint, meta, choices, wantLogprobs);
}
