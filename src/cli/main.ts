// The `ruffian` command line: one subcommand per surface, each loaded lazily so that
// `ruffian exec` never pays for loading llama.cpp. The exit-code contract (errors.ts) is applied
// here once for every command: commander's parse errors and UsageError exit 2, other failures 1,
// a closed stdout (EPIPE) ends the command quietly with 0.
import { Argument, Command, CommanderError, Option } from "commander";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../paths.js";
import { PROFILES } from "../vm/limits.js";
import { DEFAULT_STREAM_INTERVAL_MS } from "../server/sse.js";
import { DECODE_THREADS } from "../server/decode-host.js";
import { EXIT, ReportedFailure, UsageError } from "./errors.js";
import {
  applyConfigDefaults,
  integerAtLeast,
  integerBetween,
  modelOptions,
  numberBetween,
} from "./options.js";

const version = (
  JSON.parse(readFileSync(join(packageRoot, "package.json"), "utf8")) as { version: string }
).version;

const SHELLS = ["bash", "zsh", "fish"] as const;

const MODELS_DIR_HELP = "model cache (default $RUFFIAN_MODELS_DIR or ~/.node-llama-cpp/models)";

const CONTROL_VECTOR_FLAG = "--control-vector <file[:scale]>";
const CONTROL_VECTOR_HELP =
  "add a control-vector GGUF (repeatable; VM code can cvec_load it by basename)";
/** Collects a repeatable option's values. */
const collect = (value: string, previous: string[]) => [...previous, value];

/** Adds options to a command (commander's addOption takes one at a time). */
function withOptions(command: Command, options: Option[]): Command {
  for (const option of options) command.addOption(option);
  return command;
}

const maxTokens = (fallback: number, what = "tokens to generate") =>
  new Option("-n, --max-tokens <n>", what).argParser(integerAtLeast(1)).default(fallback);
const temperature = () =>
  new Option("--temp <t>", "sampling temperature (0 = greedy)")
    .argParser(numberBetween(0))
    .default(0);
const chatTemplate = () =>
  new Option(
    "--chat-template <file>",
    "Jinja chat template used instead of the model's own (GGUF tokenizer.chat_template)",
  );
const seed = () => new Option("--seed <n>", "sampling seed").argParser(integerAtLeast(0));

export function buildProgram(): Command {
  const program = new Command();
  program
    .name("ruffian")
    .description(
      "A language model that computes while it speaks: in-band C and Lisp VMs in the decode loop.",
    )
    .version(version)
    .showHelpAfterError("(add --help for usage)")
    .exitOverride()
    .hook("preAction", (_program, action) => applyConfigDefaults(action));

  withOptions(
    program
      .command("demo")
      .description("a tour on the shipped model: per-token entropy, in-band C, hooks, rewind"),
    modelOptions("the shipped model"),
  )
    .option("-p, --prompt <text>", "prompt text", "Once upon a time")
    .addOption(maxTokens(24))
    .addOption(
      new Option("--part <name>", "show one part only").choices([
        "entropy",
        "vm",
        "steer",
        "rewind",
      ]),
    )
    .action(async (opts: import("./commands/demo.js").DemoOptions) => {
      const { demoCommand } = await import("./commands/demo.js");
      await demoCommand(opts);
    });

  withOptions(
    program
      .command("run")
      .description("generate with in-band VM regions, hooks and rewind (streams the text)"),
    modelOptions("the shipped stories260K"),
  )
    .requiredOption("-p, --prompt <text>", "prompt text")
    .option("--hook <file>", "C hook program whose main() runs before generation")
    .addOption(maxTokens(128))
    .addOption(temperature())
    .addOption(
      new Option("--top-k <k>", "keep the k most likely tokens").argParser(integerAtLeast(0)),
    )
    .addOption(new Option("--top-p <p>", "nucleus sampling mass").argParser(numberBetween(0, 1)))
    .addOption(seed())
    .option("--raw", "send the prompt as plain text, without the model's chat template")
    .addOption(chatTemplate())
    .option("--no-inject", "detect regions but do not run them or inject results")
    .option("--events <file>", "write the event stream as JSON lines")
    .option("--stats", "print generation statistics to stderr")
    .option(CONTROL_VECTOR_FLAG, CONTROL_VECTOR_HELP, collect, [])
    .action(async (opts: import("./commands/run.js").RunOptions) => {
      const { runCommand } = await import("./commands/run.js");
      process.exitCode = await runCommand(opts);
    });

  withOptions(
    program.command("chat").description("interactive chat in the terminal with the VM in the loop"),
    modelOptions("the shipped ruffian-nano"),
  )
    .option("--system <file>", "system prompt file (replaces the built-in one)")
    .addOption(chatTemplate())
    .addOption(
      new Option(
        "--few-shot <n>",
        "worked examples in the built-in system prompt (plain models: as a prefix)",
      ).argParser(integerAtLeast(0)),
    )
    .option("--no-tty", "plain output for pipes and scripts")
    .addOption(maxTokens(256, "token budget per answer"))
    .addOption(temperature())
    .addOption(seed())
    .option("--hook <file>", "C hook program to run before the first generation")
    .option("--no-inject", "detect regions but do not run them or inject results")
    .option("--models-dir <dir>", MODELS_DIR_HELP)
    .option(CONTROL_VECTOR_FLAG, CONTROL_VECTOR_HELP, collect, [])
    .action(async (opts: import("./commands/chat.js").ChatOptions) => {
      const { chatCommand } = await import("./commands/chat.js");
      process.exitCode = await chatCommand(opts);
    });

  program
    .command("exec")
    .description("compile and run a C (or Lisp, CALC) program in the sandboxed VM")
    .argument("[file]", "source file, or - for standard input")
    .option("-e, --expr <code>", "code given on the command line")
    .addOption(new Option("--lang <lang>", "language").choices(["c", "lisp", "calc"]).default("c"))
    .addOption(new Option("--profile <name>", "sandbox profile").choices(Object.keys(PROFILES)))
    .option("--stats", "print compile/run statistics")
    .option("--json", "print the whole result as JSON")
    .option("--fwrapv", "signed integer overflow wraps (as gcc -fwrapv) instead of trapping")
    .action(async (file: string | undefined, opts: import("./commands/exec.js").ExecOptions) => {
      const { execCommand } = await import("./commands/exec.js");
      process.exitCode = await execCommand(file, opts);
    });

  program
    .command("serve")
    .description("OpenAI-compatible HTTP server: every request computes in-band")
    .option("-m, --model <path>", "GGUF model file or hf: URI (default: the shipped ruffian-nano)")
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .addOption(
      new Option("--port <port>", "port to listen on (0: any free port)")
        .argParser(integerAtLeast(0))
        .default(8080),
    )
    .addOption(
      new Option("--slots <n>", "requests decoded together (continuous batching)")
        .argParser(integerBetween(1, 256))
        .default(4),
    )
    .addOption(
      new Option(
        "--ctx <n>",
        "KV cells per slot (default: the model's training context)",
      ).argParser(integerAtLeast(16)),
    )
    .option("--api-key <key>", "require Authorization: Bearer <key> on /v1/*")
    .option("--api-key-file <file>", "accept any key listed in the file (one per line)")
    .addOption(
      new Option(
        "--profile <name>",
        "VM profile of requests that name none (default small)",
      ).choices(Object.keys(PROFILES)),
    )
    .addOption(
      new Option("--queue <n>", "requests that may wait for a slot (default 4 × slots)").argParser(
        integerAtLeast(0),
      ),
    )
    .addOption(
      new Option("--deadline <s>", "seconds a generation may run (default 120)").argParser(
        integerAtLeast(1),
      ),
    )
    .addOption(
      new Option(
        "--stream-interval <ms>",
        `a stream writes at most once per <ms> milliseconds; the first chunk after a pause leaves at once (default ${DEFAULT_STREAM_INTERVAL_MS}; 0: every chunk at once)`,
      ).argParser(integerBetween(0, 1000)),
    )
    .addOption(
      new Option(
        "--decode-thread <where>",
        "where the engine and decode loop run: worker (a thread of their own, HTTP on the main thread) or main (one thread for all)",
      )
        .choices(DECODE_THREADS)
        .default("worker"),
    )
    .addOption(chatTemplate())
    .option("--glass-box", "record activations so kv_read, emb_read, attn_score work (slower)")
    .option(
      CONTROL_VECTOR_FLAG,
      "FILE[:SCALE] adds a control-vector GGUF to every request (llama.cpp's own, context-wide); NAME=FILE[:SCALE] registers it for requests to apply by name (repeatable)",
      collect,
      [],
    )
    .option("--models-dir <dir>", MODELS_DIR_HELP)
    .action(async (opts: import("./commands/serve.js").ServeCommandOptions) => {
      const { serveCommand } = await import("./commands/serve.js");
      process.exitCode = await serveCommand(opts);
    });

  program
    .command("eval")
    .description("measure how well a model uses the VM on a question set")
    .option("-m, --model <path>", "GGUF model file or hf: URI (default: models/ruffian-nano.gguf)")
    .option("--set <file>", "JSON-lines question set (default: eval/nano-questions.jsonl)")
    .addOption(
      new Option("--limit <n>", "evaluate only the first n questions").argParser(integerAtLeast(1)),
    )
    .addOption(
      new Option("--parallel <n>", "sequences decoded together")
        .argParser(integerAtLeast(1))
        .default(8),
    )
    .addOption(maxTokens(200, "token budget per answer"))
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
    .option(
      "--prompt-file <file>",
      "--few-shot's prompt from a file: free text holding [YOUR TASK] (the question goes there) and a line [EXAMPLES] (the first k examples go there), then the examples, each starting at a line [EXAMPLE]; # lines are comments (eval/prompts/seeds-c-regions.txt is one, documented at its top)",
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

  // ---- steering and interpretability (issue 17) ----
  program
    .command("trace")
    .description("run a prompt with the cache on and write hook points to a safetensors file")
    .option("-m, --model <path>", "GGUF model file or hf: URI (default: the shipped model)")
    .requiredOption("-p, --prompt <text>", "prompt text (BOS added)")
    .option("--hooks <names>", "hook points, comma-separated, * globs", "blocks.*.hook_resid_post")
    .requiredOption("--out <file>", "safetensors file to write")
    .action(async (opts: import("./commands/trace.js").TraceOptions) => {
      const { traceCommand } = await import("./commands/trace.js");
      process.exitCode = await traceCommand(opts);
    });
  program
    .command("lens")
    .description("logit lens: each layer's top tokens through the final norm and unembedding")
    .option("-m, --model <path>", "GGUF model file or hf: URI (default: the shipped model)")
    .requiredOption("-p, --prompt <text>", "prompt text (BOS added)")
    .addOption(
      new Option("--top <k>", "tokens shown per layer and position")
        .argParser(integerAtLeast(1))
        .default(3),
    )
    .option("--json", "print the whole grid as JSON")
    .action(async (opts: import("./commands/lens.js").LensOptions) => {
      const { lensCommand } = await import("./commands/lens.js");
      process.exitCode = await lensCommand(opts);
    });
  program
    .command("steer")
    .description("control vectors (llama.cpp's GGUF format)")
    .command("train")
    .description("train a control vector from contrastive examples, one per line")
    .option("-m, --model <path>", "GGUF model file or hf: URI (default: the shipped model)")
    .requiredOption("--positive <file>", "examples of the wanted behaviour")
    .requiredOption("--negative <file>", "examples of its opposite (paired line by line for pca)")
    .addOption(
      new Option("--method <name>", "pca (repeng's pca_diff) or mean-diff")
        .choices(["pca", "mean-diff"])
        .default("pca"),
    )
    .option("--layers <list>", "layers to steer, e.g. 1-4 or 2,5 (default: 1..last)")
    .requiredOption("--out <file>", "control-vector GGUF to write")
    .action(async (opts: import("./commands/steer.js").SteerTrainOptions) => {
      const { steerTrainCommand } = await import("./commands/steer.js");
      process.exitCode = await steerTrainCommand(opts);
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

  program
    .command("completion")
    .description(
      "print a shell completion script (add `source <(ruffian completion bash)` to ~/.bashrc)",
    )
    .addArgument(new Argument("<shell>", "bash, zsh or fish").choices(SHELLS))
    .action(async (shell: (typeof SHELLS)[number]) => {
      const { completionScript } = await import("./completion.js");
      process.stdout.write(completionScript(program, shell));
    });

  reportUnknownOptionsFirst(program);
  return program;
}

/**
 * Commander checks required options before unknown ones, so `run --frobnicate` would complain
 * about the missing -p. Every command's required options (whoever adds the command) are checked
 * instead just before its action runs, after the unknown-option check; the message is commander's.
 */
function reportUnknownOptionsFirst(command: Command): void {
  const required = command.options.filter((o) => o.mandatory);
  for (const option of required) option.mandatory = false;
  if (required.length > 0)
    command.hook("preAction", (_parent, action) => {
      for (const option of required)
        if (action.getOptionValue(option.attributeName()) === undefined)
          action.error(`error: required option '${option.flags}' not specified`, {
            code: "commander.missingMandatoryOptionValue",
            exitCode: EXIT.usage,
          });
    });
  for (const sub of command.commands) reportUnknownOptionsFirst(sub);
}

/**
 * A closed stdout or stderr (`ruffian run … | head`) is not a failure: the reader has what it
 * wanted, as with `yes | head`. Later writes are dropped and the command finishes with its own
 * status (0). It is not ended at once: exiting while llama.cpp or V8 worker threads are busy can
 * hang in native exit handlers.
 */
function dropWritesAfterClosedPipe(stream: NodeJS.WriteStream): void {
  stream.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code !== "EPIPE") throw err;
    stream.write = (() => true) as typeof stream.write;
  });
}

export async function runCli(argv: string[]): Promise<void> {
  dropWritesAfterClosedPipe(process.stdout);
  dropWritesAfterClosedPipe(process.stderr);
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // Commander has printed its message; --help and --version are the only successes.
      process.exitCode = err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    } else if (err instanceof UsageError) {
      process.stderr.write(`ruffian: ${err.message}\n`);
      process.exitCode = EXIT.usage;
    } else if (err instanceof ReportedFailure) {
      process.stderr.write(`${err.message}\n`);
      process.exitCode = EXIT.failure;
    } else {
      process.stderr.write(`ruffian: ${(err as Error).message}\n`);
      process.exitCode = EXIT.failure;
    }
  }
}
