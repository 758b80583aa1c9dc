// The package as a user gets it: `npm pack`, installed into a fresh project, imported by name.
// No network: the fresh project gets a lockfile made from this repository's own (same versions
// and integrity hashes), so `npm ci --offline` installs every dependency from npm's cache, which
// the repository's own `npm ci` filled. Optional packages are omitted except the ones this
// platform needs (llama.cpp's CPU build, koffi's native module), which the project depends on
// directly: that keeps the install at ~100 MB instead of every GPU variant's ~700 MB.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { packageRoot } from "../../src/paths.js";

interface LockEntry {
  version?: string;
  dev?: boolean;
  optional?: boolean;
  os?: string[];
  cpu?: string[];
  [key: string]: unknown;
}

const tmp = mkdtempSync(join(tmpdir(), "ruffian-pack-"));
after(() => rmSync(tmp, { recursive: true, force: true }));

function run(command: string, args: string[], cwd: string) {
  const r = spawnSync(command, args, { cwd, encoding: "utf8", env: { ...process.env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A native package the runtime loads on this machine: llama.cpp's CPU build or koffi's module
 * (not a GPU variant, which the test does not need). */
function neededHere(name: string, entry: LockEntry): boolean {
  if (!entry.optional || entry.dev) return false;
  if (!/^@(node-llama-cpp|koromix)\//.test(name) || /cuda|vulkan|metal/.test(name)) return false;
  const fits = (list: string[] | undefined, value: string) => !list || list.includes(value);
  return fits(entry.os, process.platform) && fits(entry.cpu, process.arch) && !!entry.os;
}

test("the packed tarball installs into a fresh project and runs C and a generation", () => {
  const pack = run(
    "npm",
    ["pack", "--ignore-scripts", "--json", "--pack-destination", tmp],
    packageRoot,
  );
  assert.equal(pack.code, 0, pack.stderr);
  const tarballName = (JSON.parse(pack.stdout) as Array<{ filename: string }>)[0]!.filename;
  const tarball = readFileSync(join(tmp, tarballName));

  const ours = JSON.parse(readFileSync(join(packageRoot, "package.json"), "utf8")) as {
    version: string;
    dependencies: Record<string, string>;
    bin: Record<string, string>;
  };
  const lock = JSON.parse(readFileSync(join(packageRoot, "package-lock.json"), "utf8")) as {
    packages: Record<string, LockEntry>;
  };
  const spec = `file:../${tarballName}`;
  const dependencies: Record<string, string> = { ruffian: spec };
  const packages: Record<string, LockEntry> = {};
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === "" || entry.dev) continue;
    packages[path] = entry;
    const name = path.replace(/^node_modules\//, "");
    if (!name.includes("node_modules/") && neededHere(name, entry)) {
      dependencies[name] = entry.version!;
      const { optional: _optional, ...required } = entry;
      packages[path] = required;
    }
  }
  packages["node_modules/ruffian"] = {
    version: ours.version,
    resolved: spec,
    integrity: `sha512-${createHash("sha512").update(tarball).digest("base64")}`,
    license: "MIT",
    dependencies: ours.dependencies,
    bin: ours.bin,
  };
  packages[""] = { name: "fresh-project", dependencies };
  const project = join(tmp, "project");
  mkdirSync(project);
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify({ name: "fresh-project", private: true, type: "module", dependencies }),
  );
  writeFileSync(
    join(project, "package-lock.json"),
    JSON.stringify({ name: "fresh-project", lockfileVersion: 3, requires: true, packages }),
  );
  const install = run(
    "npm",
    ["ci", "--offline", "--ignore-scripts", "--omit=optional", "--no-audit", "--no-fund"],
    project,
  );
  assert.equal(install.code, 0, install.stderr);
  assert.ok(existsSync(join(project, "node_modules", "ruffian", "dist", "src", "index.d.ts")));

  writeFileSync(
    join(project, "use.mjs"),
    `import { runC, loadModel, shippedModels } from "ruffian";
console.log(runC("847*293").text);
const model = await loadModel(shippedModels.stories, { device: "cpu" });
for await (const event of model.generate({ prompt: "Once upon a time", maxTokens: 8 }))
  if (event.type === "done") console.log(JSON.stringify(event.text));
model.dispose();
try {
  await import("ruffian/dist/src/vm/session.js");
  console.log("internals exported");
} catch (err) {
  console.log(err.code);
}
`,
  );
  const used = run(process.execPath, ["use.mjs"], project);
  assert.equal(used.code, 0, used.stderr);
  const [c, text, internals] = used.stdout.trim().split("\n");
  assert.equal(c, "248171");
  assert.match(JSON.parse(text!) as string, /^, there was a little girl/);
  assert.equal(internals, "ERR_PACKAGE_PATH_NOT_EXPORTED");

  // The types resolve by package name: a typed use compiles, a misuse does not.
  writeFileSync(
    join(project, "typed.ts"),
    `import { runC, type VmOutcome } from "ruffian";\nconst o: VmOutcome = runC("1");\nconst n: number = o.ok ? 1 : 0;\nexport { n };\n`,
  );
  writeFileSync(
    join(project, "wrong.ts"),
    `import { runC } from "ruffian";\nconst n: number = runC("1");\nexport { n };\n`,
  );
  const tsc = join(packageRoot, "node_modules", "typescript", "bin", "tsc");
  const flags = ["--noEmit", "--strict", "--module", "nodenext", "--moduleResolution", "nodenext"];
  const typed = run(process.execPath, [tsc, ...flags, "--skipLibCheck", "typed.ts"], project);
  assert.equal(typed.code, 0, typed.stdout);
  const wrong = run(process.execPath, [tsc, ...flags, "--skipLibCheck", "wrong.ts"], project);
  assert.notEqual(wrong.code, 0);
  assert.match(wrong.stdout, /wrong\.ts\(2,7\).*VmOutcome.*not assignable to type 'number'/);

  const bin = run(join(project, "node_modules", ".bin", "ruffian"), ["exec", "-e", "6*7"], project);
  assert.equal(bin.code, 0, bin.stderr);
  assert.equal(bin.stdout, "42\n");
});
