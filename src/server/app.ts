// The Fastify application: JSON-schema validation (TypeBox + Ajv, no type coercion), errors in
// OpenAI's shape, optional bearer-key auth on /v1/*, request metrics, and the routes. GET / is
// left free for the web UI.
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type RawReplyDefaultExpression,
  type RawRequestDefaultExpression,
  type RawServerDefault,
} from "fastify";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { ApiError, errorHandler, sendError } from "./errors.js";
import type { ServerContext } from "./context.js";
import { completionRoutes } from "./routes/completions.js";
import { infoRoutes } from "./routes/info.js";
import { tokenRoutes } from "./routes/tokens.js";
import { execRoutes } from "./routes/exec.js";
import { registerWebUi } from "./web-ui.js";

export type ServerApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

export type { ServerContext };

const needsModel = (route: string) =>
  route.startsWith("/v1/") || route === "/tokenize" || route === "/detokenize";

export function buildApp(ctx: ServerContext): ServerApp {
  const app = Fastify({
    bodyLimit: ctx.bodyBytes,
    logger: false,
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((req, reply) =>
    sendError(
      reply,
      new ApiError(404, `no route ${req.method} ${req.url}`, "not_found_error", null, "not_found"),
    ),
  );
  app.addHook("onRequest", async (req, reply) => {
    if (ctx.apiKeys.length > 0 && req.url.startsWith("/v1/")) {
      const header = req.headers.authorization ?? "";
      const key = header.startsWith("Bearer ") ? header.slice(7).trim() : "";
      if (!ctx.apiKeys.includes(key))
        return sendError(
          reply,
          new ApiError(
            401,
            key
              ? "incorrect API key provided"
              : "missing API key: send Authorization: Bearer <key>",
            "authentication_error",
            null,
            "invalid_api_key",
          ),
        );
    }
    // While the model loads, /health says so and the routes that need the model answer 503.
    if (!ctx.ready && needsModel(req.routeOptions.url ?? ""))
      return sendError(reply, ctx.loadingError());
  });
  app.addHook("onResponse", async (req, reply) => {
    ctx.metrics.requests.inc({
      endpoint: req.routeOptions.url ?? "unknown",
      status: String(reply.statusCode),
    });
  });

  completionRoutes(app, ctx);
  infoRoutes(app, ctx);
  tokenRoutes(app, ctx);
  execRoutes(app, ctx);
  registerWebUi(app);
  return app;
}
