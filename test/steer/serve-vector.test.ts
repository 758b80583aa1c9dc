// `ruffian serve --control-vector`: a vector trained by `ruffian steer train` steers every
// request of the server (llama.cpp's own, context-wide control vector), seen through the
// official openai client on loopback.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openEngine } from "../../src/engine/open.js";
import { packageRoot, storiesModelPath } from "../../src/paths.js";
import { writeControlVector } from "../../src/steer/control-vector.js";
import { trainControlVector } from "../../src/steer/train.js";
import { client, serve } from "../server/helpers.js";

const dir = mkdtempSync(join(tmpdir(), "ruffian-serve-cvec-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const lines = (f: string) =>
  readFileSync(join(packageRoot, "test", "fixtures", "steer", f), "utf8")
    .split("\n")
    .filter((l) => l.trim());
const PROMPT = "Once upon a time, there was a little girl. She felt very";

test("serve --control-vector steers every request", async () => {
  const engine = await openEngine(storiesModelPath, { device: "cpu" });
  const path = join(dir, "happy.gguf");
  try {
    const cv = trainControlVector(engine, lines("happy.txt"), lines("sad.txt"), {
      method: "mean-diff",
      layers: [1, 2, 3, 4],
    });
    writeControlVector(path, cv);
  } finally {
    engine.dispose();
  }
  const first = async (controlVectors?: string[]) => {
    const server = await serve({ model: storiesModelPath, slots: 2, controlVectors });
    try {
      const api = client(server);
      const texts: string[] = [];
      for (let i = 0; i < 2; i++) {
        const r = await api.completions.create({
          model: "stories260K",
          prompt: PROMPT,
          max_tokens: 1,
          temperature: 0,
        });
        texts.push(r.choices[0]!.text);
      }
      return texts;
    } finally {
      await server.close();
    }
  };
  const plain = await first();
  const steered = await first([`${path}:2`]);
  assert.notEqual(plain[0], " happy");
  assert.deepEqual(steered, [" happy", " happy"], "every request is steered");
  await assert.rejects(
    serve({ model: storiesModelPath, controlVectors: [storiesModelPath] }),
    /general\.architecture is 'llama', not 'controlvector'/,
  );
});
