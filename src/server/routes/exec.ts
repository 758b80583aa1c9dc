// POST /v1/exec: runs C, Lisp or CALC in a fresh sandbox (no model attached) and answers the VM
// outcome as JSON, exactly as `ruffian exec --json` prints it.
import type { ServerApp, ServerContext } from "../app.js";
import { runC } from "../../vm/run-c.js";
import { runCalc } from "../../calc/calc.js";
import { LispSession } from "../../lisp/session.js";
import { ExecBody } from "../schemas.js";
import { toJson } from "../../json.js";
import type { VmOutcome } from "../../vm/result.js";

export function execRoutes(app: ServerApp, ctx: ServerContext): void {
  app.post("/v1/exec", { schema: { body: ExecBody } }, (req, reply) => {
    const { language, source } = req.body;
    const profile = req.body.profile ?? ctx.limits.defaultProfile;
    let outcome: VmOutcome;
    switch (language) {
      case "c":
        outcome = runC(source, { profile });
        break;
      case "calc":
        outcome = runCalc(source);
        break;
      case "lisp":
        outcome = new LispSession().run(source);
        break;
    }
    return reply.type("application/json").send(toJson({ language, ...outcome }));
  });
}
