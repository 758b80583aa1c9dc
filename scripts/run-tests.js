#!/usr/bin/env node
// Runs every compiled test file (dist/test/**/*.test.js) with node's built-in test runner.
// Optional arguments filter by substring of the path: `node scripts/run-tests.js vm c/`.
import { readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { spawnSync } from "node:child_process";

const root = new URL("..", import.meta.url).pathname;
const testRoot = join(root, "dist", "test");

function collect(dir) {
  const found = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) found.push(...collect(path));
    else if (name.endsWith(".test.js")) found.push(path);
  }
  return found;
}

const filters = process.argv.slice(2);
const files = collect(testRoot).filter(
  (f) => filters.length === 0 || filters.some((s) => relative(testRoot, f).includes(s)),
);
if (files.length === 0) {
  console.error("run-tests: no test files matched");
  process.exit(1);
}
const result = spawnSync(process.execPath, ["--test", "--test-reporter=spec", ...files], {
  stdio: "inherit",
});
process.exit(result.status ?? 1);
