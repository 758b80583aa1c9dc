#!/usr/bin/env node
// Entry point of the `ruffian` command: runs the compiled CLI from dist/ (built by `npm ci`).
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const main = new URL("../dist/src/cli/main.js", import.meta.url);
if (!existsSync(fileURLToPath(main))) {
  console.error("ruffian: the CLI is not built yet; run `npm run build` (npm ci does it for you).");
  process.exit(1);
}
const { runCli } = await import(main.href);
await runCli(process.argv);
