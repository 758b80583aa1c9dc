// Defaults from the config file and RUFFIAN_* variables, in the documented order: flag >
// environment > config file > built-in default. Every run gets its own HOME.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { nanoModelPath, storiesModelPath } from "../../src/paths.js";
import { ruffian } from "./chat-helpers.js";

const tmp = mkdtempSync(join(tmpdir(), "ruffian-config-"));
after(() => rmSync(tmp, { recursive: true, force: true }));

let homes = 0;
/** A fresh HOME whose ~/.config/ruffian/config.json holds `config` (raw text if a string). */
function home(config?: unknown): NodeJS.ProcessEnv {
  const dir = join(tmp, `home-${homes++}`);
  mkdirSync(join(dir, ".config", "ruffian"), { recursive: true });
  if (config !== undefined)
    writeFileSync(
      join(dir, ".config", "ruffian", "config.json"),
      typeof config === "string" ? config : JSON.stringify(config),
    );
  // Undefined values are left out of the child's environment.
  return {
    HOME: dir,
    XDG_CONFIG_HOME: undefined,
    RUFFIAN_CONFIG: undefined,
    RUFFIAN_MODEL: undefined,
    RUFFIAN_THREADS: undefined,
    RUFFIAN_DEVICE: undefined,
  };
}

/** The model and thread count `demo` reports in its first line. */
function demoHeader(env: NodeJS.ProcessEnv, ...args: string[]) {
  const r = ruffian(["demo", "-n", "1", "--part", "entropy", ...args], "", env);
  assert.equal(r.code, 0, r.stderr);
  const m = /^model (\S+) · \w+ · (\d+) thread/.exec(r.stdout);
  assert.ok(m, r.stdout);
  return { model: m[1], threads: Number(m[2]) };
}

test("flag > environment > config file > built-in default, for the model and threads", () => {
  const env = home({ model: nanoModelPath, threads: 3 });
  assert.deepEqual(demoHeader(home()), {
    model: storiesModelPath,
    threads: demoHeader(home()).threads,
  });
  assert.deepEqual(demoHeader(env), { model: nanoModelPath, threads: 3 });
  const withEnv = { ...env, RUFFIAN_MODEL: storiesModelPath, RUFFIAN_THREADS: "2" };
  assert.deepEqual(demoHeader(withEnv), { model: storiesModelPath, threads: 2 });
  assert.deepEqual(demoHeader(withEnv, "-m", nanoModelPath, "--threads", "1"), {
    model: nanoModelPath,
    threads: 1,
  });
});

test("XDG_CONFIG_HOME and RUFFIAN_CONFIG say where the config file is", () => {
  const xdg = join(tmp, "xdg");
  mkdirSync(join(xdg, "ruffian"), { recursive: true });
  writeFileSync(join(xdg, "ruffian", "config.json"), JSON.stringify({ threads: 2 }));
  assert.equal(demoHeader({ ...home(), XDG_CONFIG_HOME: xdg }).threads, 2);
  const file = join(tmp, "elsewhere.json");
  writeFileSync(file, JSON.stringify({ threads: 3 }));
  assert.equal(demoHeader({ ...home(), RUFFIAN_CONFIG: file }).threads, 3);
});

test("a bad config value is a usage error naming the file and the setting", () => {
  const env = home({ threads: 0 });
  const r = ruffian(["run", "-p", "hi"], "", env);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /config file .*config\.json: "threads": expected an integer ≥ 1/);
  const device = ruffian(["chat", "--no-tty"], "", home({ device: "tpu" }));
  assert.equal(device.code, 2);
  assert.match(device.stderr, /"device": Allowed choices are auto, cpu/);
  const unknown = ruffian(["run", "-p", "hi"], "", home({ colour: "red" }));
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown setting "colour" \(known: model, threads, device\)/);
  const broken = ruffian(["run", "-p", "hi"], "", home("{ not json"));
  assert.equal(broken.code, 2);
  assert.match(broken.stderr, /config file .*config\.json is not valid JSON/);
  // A bad environment value is checked like a flag.
  const envThreads = ruffian(["run", "-p", "hi"], "", { ...home(), RUFFIAN_THREADS: "many" });
  assert.equal(envThreads.code, 2);
  assert.match(
    envThreads.stderr,
    /'--threads <n>' value 'many' from env 'RUFFIAN_THREADS' is invalid/,
  );
});

test("commands that load no model ignore the config file", () => {
  const r = ruffian(["exec", "-e", "6*7"], "", home("{ not json"));
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "42\n");
});
