// `ruffian serve --control-vector`: a vector trained by `ruffian steer train` steers every
// request of the server (llama.cpp's own, context-wide control vector), or, registered under a
// name, only the requests that name it; seen through the official openai client on loopback.
import { after, before, test } from "node:test";
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
const path = join(dir, "happy.gguf");

before(async () => {
  const engine = await openEngine(storiesModelPath, { device: "cpu" });
  try {
    const cv = trainControlVector(engine, lines("happy.txt"), lines("sad.txt"), {
      method: "mean-diff",
      layers: [1, 2, 3, 4],
    });
    writeControlVector(path, cv);
  } finally {
    engine.dispose();
  }
});

test("serve --control-vector steers every request", async () => {
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

test("serve --control-vector NAME=PATH steers only the requests that name it", async () => {
  const story = (ruffian?: object) => ({
    model: "stories260K",
    prompt: PROMPT,
    max_tokens: 12,
    temperature: 0,
    ...(ruffian ? { ruffian } : {}),
  });
  const textOf = (r: any) => r.choices[0].text as string;
  const plainServer = await serve({ model: storiesModelPath, slots: 1 });
  let plain: string;
  try {
    plain = textOf(await client(plainServer).completions.create(story()));
  } finally {
    await plainServer.close();
  }
  const server = await serve({
    model: storiesModelPath,
    slots: 2,
    controlVectors: [`happy=${path}:2`],
  });
  try {
    const api = client(server);
    // Both at once, on the two slots of one batch.
    const [steered, unsteered] = await Promise.all([
      api.completions.create(story({ controlVectors: [{ name: "happy" }] }) as any),
      api.completions.create(story()),
    ]);
    assert.match(textOf(steered), /^ happy/);
    assert.equal(textOf(unsteered), plain, "the request without a vector is a plain run");
    // A scale in the request replaces the registered one: 0 is no steering at all.
    const zero = await api.completions.create(
      story({ controlVectors: [{ name: "happy", scale: 0 }] }) as any,
    );
    assert.equal(textOf(zero), plain);
    // VM code can load a registered vector by its name (it steers from the next forward pass).
    const hooked = await api.completions.create(
      story({ hook: 'int main() { cvec_apply(cvec_load("happy"), 2000); return 0; }' }) as any,
    );
    assert.notEqual(textOf(hooked), plain);
    // Requests name registered vectors only; anything else is a 400 naming the field.
    const bad = await fetch(`${server.url}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(story({ controlVectors: [{ name: "happy" }, { name: path }] })),
    });
    assert.equal(bad.status, 400);
    const error = ((await bad.json()) as any).error;
    assert.equal(error.param, "ruffian.controlVectors[1].name");
    assert.match(error.message, /is not registered; this server has: happy/);
  } finally {
    await server.close();
  }
  await assert.rejects(
    serve({ model: storiesModelPath, controlVectors: [`a=${path}`, `a=${path}:2`] }),
    /the name 'a' is registered twice/,
  );
});
