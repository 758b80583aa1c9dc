// Reads the live model: tokenizes a prompt, decodes it, and prints the five most likely next
// tokens from the logits; then steers a generation with a per-request hook that bans a token.
// node examples/api/glass-box.mjs
import { loadModel, shippedModels } from "ruffian";

const model = await loadModel(shippedModels.stories);
try {
  const { engine } = model;
  engine.decode([{ seq: 0, tokens: engine.tokenize("Once upon a time", { addSpecial: true }) }]);
  const logits = engine.logits(0);
  const top = [...logits.keys()].sort((a, b) => logits[b] - logits[a]).slice(0, 5);
  console.log(
    "most likely next tokens:",
    top.map((id) => JSON.stringify(engine.tokenText(id))).join(" "),
  );
  engine.truncate(0, 0);

  // The hook runs before every token and masks the model's favourite, so the text changes.
  const banned = top[0];
  const hook = `void ban(int step) { logit_set(${banned}, -1000000); }
int main() { hook_set("ban", 1000); return 0; }`;
  let text = "";
  for await (const event of model.generate({ prompt: "Once upon a time", maxTokens: 12, hook })) {
    if (event.type === "done") text = event.text;
  }
  console.log(`with ${JSON.stringify(engine.tokenText(banned))} banned: Once upon a time${text}`);
} finally {
  model.dispose();
}
