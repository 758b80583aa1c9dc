// The `ruffian` command line: one subcommand per surface, each loaded lazily so that
// `ruffian exec` never pays for loading llama.cpp.
import { Command, CommanderError } from "commander";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../paths.js";

const version = (
  JSON.parse(readFileSync(join(packageRoot, "package.json"), "utf8")) as { version: string }
).version;

const MODELS_DIR_HELP = "model cache (default $RUFFIAN_MODELS_DIR or ~/.node-llama-cpp/models)";

/** Marks a subcommand whose behaviour a later issue delivers; it fails loudly rather than pretending. */
function notYet(what: string): () => never {
  return () => {
    process.stderr.write(`ruffian: '${what}' is not implemented yet\n`);
    process.exit(2);
  };
}

export function buildProgram(): Command {
  const program = new Command();
  program
    .name("ruffian")
    .description(
      "A language model that computes while it speaks: in-band C and Lisp VMs in the decode loop.",
    )
    .version(version)
    .showHelpAfterError();

  program
    .command("demo")
    .description("a tour on the shipped model: per-token entropy, in-band C, hooks, rewind")
    .option("-m, --model <path>", "GGUF model file (default: the shipped model)")
    .option("-p, --prompt <text>", "prompt text", "Once upon a time")
    .option("-n, --max-tokens <n>", "tokens to generate", "24")
    .option("--part <name>", "show one part only: entropy, vm, steer or rewind")
    .action(async (opts: import("./commands/demo.js").DemoOptions) => {
      const { demoCommand } = await import("./commands/demo.js");
      await demoCommand(opts);
    });

  program
    .command("run")
    .description("generate with in-band VM regions, hooks and rewind (streams the text)")
    .option("-m, --model <path>", "GGUF model file or hf: URI (default: the shipped model)")
    .requiredOption("-p, --prompt <text>", "prompt text")
    .option("--hook <file>", "C hook program whose main() runs before generation")
    .option("-n, --max-tokens <n>", "tokens to generate", "128")
    .option("--temp <t>", "sampling temperature (0 = greedy)", "0")
    .option("--top-k <k>", "keep the k most likely tokens")
    .option("--top-p <p>", "nucleus sampling mass")
    .option("--seed <n>", "sampling seed")
    .option("--raw", "send the prompt as plain text, without the model's chat template")
    .option("--no-inject", "detect regions but do not run them or inject results")
    .option("--events <file>", "write the event stream as JSON lines")
    .option("--stats", "print generation statistics to stderr")
    .action(async (opts: import("./commands/run.js").RunOptions) => {
      const { runCommand } = await import("./commands/run.js");
      process.exitCode = await runCommand(opts);
    });

  program
    .command("chat")
    .description("interactive chat in the terminal with the VM in the loop")
    .option("-m, --model <path>", "GGUF model file or hf: URI (default: the shipped ruffian-nano)")
    .option("--system <file>", "system prompt file (replaces the built-in one)")
    .option(
      "--few-shot <n>",
      "worked examples in the built-in system prompt (plain models: as a prefix)",
    )
    .option("--no-tty", "plain output for pipes and scripts")
    .option("-n, --max-tokens <n>", "token budget per answer", "256")
    .option("--temp <t>", "sampling temperature (0 = greedy)", "0")
    .option("--seed <n>", "sampling seed")
    .option("--hook <file>", "C hook program to run before the first generation")
    .option("--no-inject", "detect regions but do not run them or inject results")
    .option("--models-dir <dir>", MODELS_DIR_HELP)
    .option("--device <name>", "auto, cpu, cuda, vulkan or metal", "auto")
    .action(async (opts: import("./commands/chat.js").ChatOptions) => {
      const { chatCommand } = await import("./commands/chat.js");
      process.exitCode = await chatCommand(opts);
    });

  program
    .command("exec")
    .description("compile and run a C (or Lisp, CALC) program in the sandboxed VM")
    .argument("[file]", "source file, or - for standard input")
    .option("-e, --expr <code>", "code given on the command line")
    .option("--lang <lang>", "c, lisp or calc", "c")
    .option("--profile <name>", "sandbox profile: tiny, small, medium, large, huge")
    .option("--stats", "print compile/run statistics")
    .option("--json", "print the whole result as JSON")
    .action(async (file: string | undefined, opts: import("./commands/exec.js").ExecOptions) => {
      const { execCommand } = await import("./commands/exec.js");
      process.exitCode = await execCommand(file, opts);
    });

  program
    .command("serve")
    .description("OpenAI-compatible HTTP server with the web UI")
    .option("-m, --model <path>", "GGUF model file or hf: URI")
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .option("--port <port>", "port to listen on", "8080")
    .action(notYet("serve"));

  program
    .command("eval")
    .description("measure how well a model uses the VM on a question set")
    .option("-m, --model <path>", "GGUF model file or hf: URI (default: models/ruffian-nano.gguf)")
    .option("--set <file>", "JSON-lines question set (default: eval/nano-questions.jsonl)")
    .option("--limit <n>", "evaluate only the first n questions")
    .option("--parallel <n>", "sequences decoded together", "8")
    .option("-n, --max-tokens <n>", "token budget per answer", "200")
    .option("--no-inject", "detect regions but inject nothing: the model must guess results")
    .option("--json <file>", "write the full report with every answer")
    .option("--table", "compare (a) with the VM, (b) injection off, (c) a baseline model")
    .option(
      "--baseline <path>",
      "baseline model of --table and --compare (default: models/ruffian-nano-direct.gguf)",
    )
    .option("--questions <file>", "JSON-lines question set (same as --set)")
    .option(
      "--few-shot <counts>",
      "sweep worked examples in the prompt, e.g. 0,1,2,5,10 (any model; eval/algorithm-questions.jsonl is a set for it)",
    )
    .option("--compare", "in-band vs tool calls vs direct answers, with the cost of each answer")
    .option(
      "--tools-model <path>",
      "model of --compare's tool-call mode (default: models/ruffian-nano-tools.gguf)",
    )
    .option("--plot <file.svg>", "where --few-shot or --compare writes its plot")
    .action(async (opts: import("./commands/eval.js").EvalCommandOptions) => {
      const { evalCommand } = await import("./commands/eval.js");
      process.exitCode = await evalCommand(opts);
    });

  program
    .command("pull")
    .description("download a model (hf:owner/repo/file.gguf) into the model cache")
    .argument("<uri>", "hf: URI of the model")
    .option("--dir <dir>", MODELS_DIR_HELP)
    .action(async (uri: string, opts: import("./commands/pull.js").PullOptions) => {
      const { pullCommand } = await import("./commands/pull.js");
      process.exitCode = await pullCommand(uri, opts);
    });

  program
    .command("models")
    .description("list cached models")
    .option("--dir <dir>", MODELS_DIR_HELP)
    .action(async (opts: import("./commands/models.js").ModelsOptions) => {
      const { modelsCommand } = await import("./commands/models.js");
      process.exitCode = await modelsCommand(opts);
    });

  return program;
}

export async function runCli(argv: string[]): Promise<void> {
  const program = buildProgram();
  program.exitOverride();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) process.exit(err.exitCode);
    process.stderr.write(`ruffian: ${(err as Error).message}\n`);
    process.exit(1);
  }
}
