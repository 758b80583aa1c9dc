// Serves the web UI (dist/web, built from web/ by `npm run build`) at `/` with @fastify/static.
// Only the files that exist at startup get routes (no wildcard), so unknown paths, /v1/* ones
// included, still reach the API's own 404 in OpenAI's shape.
import { existsSync } from "node:fs";
import { join } from "node:path";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance } from "fastify";
import { webUiDir } from "../paths.js";

/** Call while building the app, before it listens (the plugin loads with the others). */
export function registerWebUi(app: FastifyInstance, root = webUiDir): void {
  if (!existsSync(join(root, "index.html"))) {
    app.get("/", (_req, reply) =>
      reply
        .code(503)
        .type("text/plain; charset=utf-8")
        .send(`The web UI is not built (${root} has no index.html): run npm run build.\n`),
    );
    return;
  }
  void app.register(fastifyStatic, { root, wildcard: false, index: "index.html" });
}
