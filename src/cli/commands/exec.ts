// `ruffian exec`: runs a C (or Lisp, CALC) program from a file, standard input or -e in the
// sandboxed VM and prints its result; errors go to stderr as file:line:col: message.
import { readFileSync } from "node:fs";
import { UsageError } from "../errors.js";
import { toJson } from "../../json.js";
import { runC, type VmOutcome, type VmProfileName } from "../../vm/index.js";

export interface ExecOptions {
  expr?: string;
  lang: string;
  profile?: string;
  stats?: boolean;
  json?: boolean;
  /** Signed overflow wraps (gcc -fwrapv) instead of trapping. */
  fwrapv?: boolean;
}

type Runner = (source: string) => VmOutcome;

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** The runner for a language; Lisp and CALC are loaded only when asked for. */
async function runnerFor(
  lang: string,
  profile: VmProfileName | undefined,
  programName: string,
  wrapv: boolean,
): Promise<Runner | string> {
  switch (lang) {
    case "c":
      return (src) => runC(src, { profile, programName, wrapv });
    case "lisp":
      try {
        const modulePath = "../../lisp/index.js";
        const lisp = (await import(modulePath)) as {
          LispSession: new () => { run(s: string): VmOutcome };
        };
        return (src) => new lisp.LispSession().run(src);
      } catch {
        return "language 'lisp' is not available";
      }
    case "calc":
      try {
        const modulePath = "../../calc/calc.js";
        const calc = (await import(modulePath)) as { runCalc(s: string): VmOutcome };
        return (src) => calc.runCalc(src);
      } catch {
        return "language 'calc' is not available";
      }
    default:
      return `unknown language '${lang}' (use c, lisp or calc)`;
  }
}

export async function execCommand(file: string | undefined, opts: ExecOptions): Promise<number> {
  const err = (msg: string): number => {
    process.stderr.write(`ruffian: ${msg}\n`);
    return 1;
  };
  const profile = opts.profile as VmProfileName | undefined;

  let source: string;
  let name: string;
  if (opts.expr !== undefined) {
    if (file !== undefined) throw new UsageError("exec: give either a file or -e, not both");
    source = opts.expr;
    name = "<expr>";
  } else if (file === undefined && process.stdin.isTTY) {
    // Nothing to read but a terminal: waiting silently for a program would look like a hang.
    throw new UsageError(
      "exec: no program given\nusage: ruffian exec FILE | ruffian exec - < FILE | ruffian exec -e CODE  (--help for more)",
    );
  } else if (file === undefined || file === "-") {
    source = await readStdin();
    name = "<stdin>";
  } else {
    try {
      source = readFileSync(file, "utf8");
    } catch (e) {
      return err(`cannot read '${file}': ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
    }
    name = file;
  }

  const runner = await runnerFor(opts.lang, profile, name, opts.fwrapv ?? false);
  if (typeof runner === "string") return err(runner);
  const outcome = runner(source);

  if (opts.json) {
    process.stdout.write(toJson(outcome, 2) + "\n");
    return outcome.ok ? 0 : 1;
  }
  if (outcome.ok && outcome.exitCode !== undefined) {
    // A whole program, as a C runner (tcc -run) runs it: only what it printed, and its status.
    process.stdout.write(outcome.stdout);
    if (outcome.outputTruncated)
      process.stderr.write("ruffian: output truncated at the output limit\n");
  } else if (outcome.ok) {
    const text = outcome.text;
    process.stdout.write(text.length > 0 && !text.endsWith("\n") ? text + "\n" : text);
    if (outcome.outputTruncated)
      process.stderr.write("ruffian: output truncated at the output limit\n");
  } else {
    if (outcome.stdout)
      process.stdout.write(outcome.stdout.endsWith("\n") ? outcome.stdout : outcome.stdout + "\n");
    const e = outcome.error;
    const where = e.line > 0 ? `${name}:${e.line}:${e.column}` : name;
    process.stderr.write(`${where}: ${e.message}\n`);
  }
  if (opts.stats) {
    const s = outcome.stats;
    process.stderr.write(
      `compile ${s.compileMs.toFixed(3)} ms, run ${s.runMs.toFixed(3)} ms, ` +
        `${s.instructions} instructions, ${s.memoryBytes} bytes of memory\n`,
    );
  }
  if (!outcome.ok) return 1;
  return outcome.exitCode ?? 0;
}
