// POST /tokenize and POST /detokenize, in llama-server's shapes ({tokens} and {content}).
import type { ServerApp, ServerContext } from "../app.js";
import { badRequest } from "../errors.js";
import { DetokenizeBody, TokenizeBody } from "../schemas.js";

export function tokenRoutes(app: ServerApp, ctx: ServerContext): void {
  app.post("/tokenize", { schema: { body: TokenizeBody } }, (req) => {
    const engine = ctx.engine;
    const tokens = engine.tokenize(req.body.content, {
      addSpecial: req.body.add_special ?? false,
      parseSpecial: true,
    });
    if (!req.body.with_pieces) return { tokens };
    return { tokens: tokens.map((id) => ({ id, piece: engine.tokenText(id) })) };
  });
  app.post("/detokenize", { schema: { body: DetokenizeBody } }, (req) => {
    const engine = ctx.engine;
    const n = engine.capabilities.nVocab;
    const bad = req.body.tokens.findIndex((t) => t >= n);
    if (bad >= 0)
      throw badRequest(
        `token ${req.body.tokens[bad]} at index ${bad} is outside the vocabulary (0..${n - 1})`,
        `tokens[${bad}]`,
      );
    return { content: engine.detokenize(req.body.tokens) };
  });
}
