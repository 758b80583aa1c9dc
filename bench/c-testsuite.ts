// Conformance against c-testsuite (github.com/c-testsuite/c-testsuite): runs every
// tests/single-exec/*.c of a local copy through the `ruffian exec` CLI exactly as a user would, and
// counts a pass when the exit status is 0 and stdout+stderr equal the .expected file (the suite's
// own posix runner rule). The suite is not vendored: its test cases carry the licences of tcc
// (LGPL) and scc, so this script takes the path of a checkout instead.
// Run: node dist/bench/c-testsuite.js PATH/TO/c-testsuite [--jobs n] [--verbose]
import { spawn } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { packageRoot } from "../src/paths.js";

interface Result {
  name: string;
  pass: boolean;
  why: string;
}

function usage(): never {
  process.stderr.write(
    "usage: node dist/bench/c-testsuite.js PATH/TO/c-testsuite [--jobs n] [--verbose]\n",
  );
  process.exit(2);
}

const args = process.argv.slice(2);
const root = args.find((a) => !a.startsWith("--"));
if (!root) usage();
const jobsArg = args.indexOf("--jobs");
const jobs = jobsArg >= 0 ? Math.max(1, Number(args[jobsArg + 1])) : cpus().length;
const verbose = args.includes("--verbose");
const dir = existsSync(join(root, "tests", "single-exec"))
  ? join(root, "tests", "single-exec")
  : root;
const cli = join(packageRoot, "bin", "ruffian.js");

/** Runs one program through the CLI with stdout and stderr in one stream, as `cmd > out 2>&1`. */
function runOne(file: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      "sh",
      ["-c", 'exec "$0" "$1" exec "$2" 2>&1', process.execPath, cli, file],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    const chunks: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => chunks.push(c));
    child.on("close", (code) => resolve({ code, output: Buffer.concat(chunks).toString("utf8") }));
  });
}

async function main(): Promise<void> {
  let names: string[];
  try {
    names = readdirSync(dir)
      .filter((n) => n.endsWith(".c"))
      .sort();
  } catch {
    process.stderr.write(`c-testsuite: cannot read '${dir}'\n`);
    process.exit(1);
  }
  const results: Result[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < names.length) {
      const name = names[next++]!;
      const file = join(dir, name);
      const expected = readFileSync(file + ".expected", "utf8");
      const { code, output } = await runOne(file);
      let why = "";
      if (code !== 0) why = `exit status ${code}`;
      else if (output !== expected) why = "output differs";
      if (why) why += `: ${output.split("\n").slice(0, 2).join(" | ").slice(0, 160)}`;
      results.push({ name, pass: why === "", why });
    }
  };
  await Promise.all(Array.from({ length: jobs }, worker));
  results.sort((a, b) => a.name.localeCompare(b.name));
  const failed = results.filter((r) => !r.pass);
  for (const r of failed) process.stdout.write(`FAIL ${r.name}: ${r.why}\n`);
  if (verbose)
    for (const r of results.filter((x) => x.pass)) process.stdout.write(`pass ${r.name}\n`);
  process.stdout.write(
    `c-testsuite through \`ruffian exec\`: ${results.length - failed.length}/${results.length} pass ` +
      `(load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores)\n`,
  );
}

await main();
