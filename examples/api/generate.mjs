// Loads the shipped story model and streams a generation in which a hook program makes the model
// write a C region; the VM runs it inside the decode loop and the result is injected.
// node examples/api/generate.mjs
import { readFileSync } from "node:fs";
import { loadModel, shippedModels } from "ruffian";

const hook = new URL("../hooks/write-c.c", import.meta.url);
const model = await loadModel(shippedModels.stories);
try {
  process.stdout.write("Once upon a time");
  for await (const event of model.generate({
    prompt: "Once upon a time",
    maxTokens: 24,
    hook: readFileSync(hook, "utf8"),
    hookName: "write-c.c",
  })) {
    if (event.type === "token") process.stdout.write(event.text);
    else if (event.type === "injection") process.stdout.write(event.text);
    else if (event.type === "vm" && event.origin === "region")
      console.error(
        `\n[VM ran ${JSON.stringify(event.source)}: ${event.outcome.ok ? "ok" : "failed"}]`,
      );
    else if (event.type === "done")
      console.log(
        `\n(${event.reason}, ${event.stats.sampledTokens} tokens, ${event.stats.vmCalls} VM calls)`,
      );
  }
} finally {
  model.dispose();
}
