#!/usr/bin/env node
// Rewrites the intrinsics table in docs/decode-loop.md from the one table
// (src/decode/intrinsic-table.ts). Run through `npm run docs:intrinsics` (which builds first).
import { readFileSync, writeFileSync } from "node:fs";
import { withIntrinsicsTable } from "../dist/src/decode/intrinsic-docs.js";

const path = new URL("../docs/decode-loop.md", import.meta.url);
const before = readFileSync(path, "utf8");
const after = withIntrinsicsTable(before);
if (after !== before) writeFileSync(path, after);
console.log(after === before ? "docs/decode-loop.md is current" : "docs/decode-loop.md updated");
