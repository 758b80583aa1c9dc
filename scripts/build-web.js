#!/usr/bin/env node
// Builds the web UI (web/) into dist/web: one HTML page, one JS bundle and one CSS file with every
// asset inlined, so `ruffian serve` can serve it with no network at run time. Type-checking of the
// web sources is done by `tsc -p web/tsconfig.json` in `npm run build`; esbuild only bundles.
import { build } from "esbuild";
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const outdir = join(root, "dist", "web");

rmSync(outdir, { recursive: true, force: true });
mkdirSync(outdir, { recursive: true });
await build({
  entryPoints: { app: join(root, "web", "src", "main.tsx") },
  outdir,
  bundle: true,
  minify: true,
  sourcemap: true,
  format: "esm",
  target: ["es2022"],
  jsx: "automatic",
  jsxImportSource: "preact",
  // The experiments' C programs are imported as text so the gallery ships them in the bundle.
  loader: { ".c": "text" },
  logLevel: "warning",
});
copyFileSync(join(root, "web", "index.html"), join(outdir, "index.html"));
