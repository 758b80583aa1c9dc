// POST /tokenize and POST /detokenize, in llama-server's shapes ({tokens} and {content}), by the
// engine's own tokenizer on the decode host.
import type { ServerApp, ServerContext } from "../app.js";
import { DetokenizeBody, TokenizeBody } from "../schemas.js";

export function tokenRoutes(app: ServerApp, ctx: ServerContext): void {
  app.post("/tokenize", { schema: { body: TokenizeBody } }, (req) =>
    ctx.host.tokenize(
      req.body.content,
      req.body.add_special ?? false,
      req.body.with_pieces ?? false,
    ),
  );
  app.post("/detokenize", { schema: { body: DetokenizeBody } }, async (req) => ({
    content: await ctx.host.detokenize(req.body.tokens),
  }));
}
