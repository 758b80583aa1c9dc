// POST /v1/exec: runs C, Lisp or CALC in a fresh sandbox (no model attached) and answers the VM
// outcome as JSON, exactly as `ruffian exec --json` prints it. The program runs on a VM worker:
// one computing for seconds leaves the decode loop and every stream going.
import type { ServerApp, ServerContext } from "../app.js";
import { ExecBody } from "../schemas.js";
import { toJson } from "../../json.js";

export function execRoutes(app: ServerApp, ctx: ServerContext): void {
  app.post("/v1/exec", { schema: { body: ExecBody } }, async (req, reply) => {
    const { language, source } = req.body;
    const profile = req.body.profile ?? ctx.limits.defaultProfile;
    const outcome = await ctx.vmWorkers.run(
      language === "c" ? { language, source, options: { profile } } : { language, source },
    );
    return reply.type("application/json").send(toJson({ language, ...outcome }));
  });
}
