// GET /v1/models, GET /health and GET /metrics: what is served, whether it is ready, and the
// Prometheus counters. /health and /metrics answer while the model loads.
import { statSync } from "node:fs";
import type { ServerApp, ServerContext } from "../app.js";

export function infoRoutes(app: ServerApp, ctx: ServerContext): void {
  // The model file's size, read once loaded: what a user compares models by ("3.8 MB").
  let bytes: number | undefined;
  const model = () => ({
    id: ctx.modelId,
    object: "model",
    created: ctx.startedAt,
    owned_by: "ruffian",
    ruffian: {
      path: ctx.host.model.path,
      description: ctx.host.model.description,
      bytes: (bytes ??= statSync(ctx.host.model.path).size),
      vocabulary: ctx.host.model.nVocab,
      slots: ctx.host.model.slots,
      slotContext: ctx.limits.slotContext,
    },
  });
  app.get("/v1/models", () => ({ object: "list", data: [model()] }));
  app.get("/v1/models/:id", (req) => {
    ctx.checkModel((req.params as { id: string }).id);
    return model();
  });
  app.get("/health", (_req, reply) => {
    if (!ctx.ready) {
      const loading = ctx.loadingError();
      return reply
        .code(loading.status)
        .headers(loading.headers)
        .send({ status: "loading", ...loading.body() });
    }
    return {
      status: "ok",
      slots_idle: ctx.host.model.slots - ctx.host.busy,
      slots_processing: ctx.host.busy,
      queued: ctx.host.waiting,
    };
  });
  app.get("/metrics", async (_req, reply) => {
    const registry = ctx.metrics.registry;
    return reply.type(registry.contentType).send(await registry.metrics());
  });
}
