#!/usr/bin/env node
// Adds lockfile entries for node-llama-cpp's prebuilt-binary packages of other platforms.
// The registry mirror reachable here serves only the Linux ones, so `npm install` drops the rest
// and `npm ci` then rejects the lockfile as out of sync. Run after any `npm install`.
import { readFileSync, writeFileSync } from "node:fs";

const lockPath = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(lockPath, "utf8"));
const packages = lock.packages;
const parent = packages["node_modules/node-llama-cpp"];
const osOf = { linux: "linux", mac: "darwin", win: "win32" };

let added = 0;
for (const [name, version] of Object.entries(parent.optionalDependencies ?? {})) {
  const key = `node_modules/${name}`;
  if (packages[key]) continue;
  // Names look like @node-llama-cpp/<os>-<cpu>[-<backend>]
  const [osName, cpu] = name.split("/")[1].split("-");
  packages[key] = {
    version,
    cpu: [cpu],
    license: "MIT",
    optional: true,
    os: [osOf[osName] ?? osName],
    engines: { node: ">=20.0.0" },
  };
  added++;
}
lock.packages = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a < b ? -1 : 1)),
);
writeFileSync(lockPath, JSON.stringify(lock, null, 2) + "\n");
console.log(`complete-lockfile: added ${added} platform entries`);
