// `ruffian demo`: a short tour on the shipped model — per-token entropy, a region computed
// in-band, hooks that read and steer the distribution, and a rewound timeline.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { defaultModelPath, nanoModelPath, packageRoot } from "../../paths.js";
import { openEngine } from "../../engine/open.js";
import type { Engine } from "../../engine/types.js";
import { DecodeLoop, type GenerationRequest } from "../../decode/loop.js";
import type { DecodeEvent, TokenEvent } from "../../decode/events.js";
import { promptStyle, renderPrompt, stopStrings } from "../../decode/prompt.js";
import { paint } from "../style.js";
import type { ModelOptionValues } from "../options.js";

export interface DemoOptions extends ModelOptionValues {
  prompt: string;
  maxTokens: number;
  /** One of PARTS (commander checks the choice). */
  part?: string;
}

const PARTS = ["entropy", "vm", "steer", "rewind"] as const;
type Part = (typeof PARTS)[number];

function hookFile(name: string): string {
  return readFileSync(join(packageRoot, "examples", "hooks", name), "utf8");
}

interface Collected {
  tokens: TokenEvent[];
  text: string;
  console: string[];
  footnotes: string[];
  ms: number;
}

async function generate(engine: Engine, request: GenerationRequest): Promise<Collected> {
  const out: Collected = { tokens: [], text: "", console: [], footnotes: [], ms: 0 };
  const started = performance.now();
  for await (const ev of new DecodeLoop(engine).run([request]) as AsyncGenerator<DecodeEvent>) {
    if (ev.type === "token") out.tokens.push(ev);
    else if (ev.type === "hook-log") out.console.push(...ev.text.replace(/\n$/, "").split("\n"));
    else if (ev.type === "hook-error") out.console.push(`error in ${ev.hook}: ${ev.message}`);
    else if (ev.type === "rewind") {
      out.footnotes.push(
        `[explored: ${JSON.stringify(ev.erased.trim())} — "${ev.memo}" → rewound]`,
      );
    } else if (ev.type === "done") out.text = ev.text;
  }
  out.ms = performance.now() - started;
  return out;
}

/** Highlights `= VM[…]` results in the final text. */
function showText(prompt: string, text: string): string {
  return paint.bold(prompt) + text.replace(/( = VM\[[^\]]*\])/g, (m) => paint.green(m));
}

function showConsole(lines: string[]): string {
  return lines.map((l) => paint.dim(`  │ ${l}`)).join("\n") + (lines.length ? "\n" : "");
}

export async function demoCommand(opts: DemoOptions): Promise<void> {
  const maxTokens = opts.maxTokens;
  const parts: Part[] = opts.part ? [opts.part as Part] : [...PARTS];
  const modelPath = opts.model ?? defaultModelPath;
  const engine = await openEngine(modelPath, {
    contextSize: 1024,
    device: opts.device,
    threads: opts.threads,
  });
  const w = (s: string) => process.stdout.write(s);
  try {
    const caps = engine.capabilities;
    w(paint.dim(`model ${modelPath} · ${caps.backend} · ${caps.threads} thread(s)`) + "\n");
    const style = promptStyle(engine);
    const raw = (prompt: string, extra: Partial<GenerationRequest> = {}): GenerationRequest => ({
      prompt,
      maxTokens,
      ...extra,
    });

    if (parts.includes("entropy")) {
      w(`\n${paint.bold("1. What the model writes, and how sure it is")}\n`);
      const r = await generate(engine, raw(opts.prompt));
      w(showText(opts.prompt, r.text) + "\n\n");
      w(paint.dim("token              p        entropy (nats)") + "\n");
      for (const t of r.tokens) {
        const bar = "█".repeat(Math.min(20, Math.round(t.entropy * 4)));
        w(
          `${JSON.stringify(t.text).padEnd(18)} ${t.probability.toFixed(3).padStart(5)}   ` +
            `${t.entropy.toFixed(3).padStart(6)} ${paint.cyan(bar)}\n`,
        );
      }
      w(paint.dim(`${r.tokens.length} tokens in ${r.ms.toFixed(0)} ms`) + "\n");
    }

    if (parts.includes("vm")) {
      w(
        `\n${paint.bold("2. Computing while speaking: a [C: …] region runs inside the decode loop")}\n`,
      );
      if (opts.model === undefined) {
        // The shipped ruffian-nano was trained to answer through the VM.
        const nano = await openEngine(nanoModelPath, { contextSize: 512 });
        try {
          w(paint.dim(`model ${nanoModelPath}`) + "\n");
          for (const question of [
            "What is 4821 times 377?",
            "How many primes are there below 5000?",
          ]) {
            const prompt = renderPrompt(nano, [{ role: "user", content: question }]);
            const r = await generate(nano, { prompt, maxTokens: 160, stop: stopStrings("nano") });
            w(showText(`Q: ${question}\nA:`, r.text) + "\n");
          }
        } finally {
          nano.dispose();
        }
      } else if (style === "nano") {
        const question = "What is 4821 times 377?";
        const prompt = renderPrompt(engine, [{ role: "user", content: question }]);
        const r = await generate(engine, { prompt, maxTokens: 120, stop: stopStrings(style) });
        w(showText(`Q: ${question}\nA:`, r.text) + "\n");
      } else {
        w(
          paint.dim(
            "(a hook makes this small story model write the region; the VM computes the result)",
          ) + "\n",
        );
        const r = await generate(engine, raw(opts.prompt, { hook: hookFile("write-c.c") }));
        w(showText(opts.prompt, r.text) + "\n");
      }
    }

    if (parts.includes("steer")) {
      w(`\n${paint.bold("3. Reading and steering the distribution from C hooks")}\n`);
      const seen = await generate(engine, raw(opts.prompt, { hook: hookFile("top3.c") }));
      w(showConsole(seen.console));
      const steered = await generate(engine, raw(opts.prompt, { hook: hookFile("suppress.c") }));
      w(showText(opts.prompt, steered.text) + "\n");
      w(showConsole(steered.console));
    }

    if (parts.includes("rewind")) {
      w(`\n${paint.bold("4. Rewind: checkpoint, explore, go back with a memo")}\n`);
      const r = await generate(
        engine,
        raw(opts.prompt, { hook: hookFile("rewind.c"), maxTokens: maxTokens + 12 }),
      );
      w(showText(opts.prompt, r.text) + "\n");
      for (const f of r.footnotes) w(paint.dim(f) + "\n");
      w(showConsole(r.console));
    }
  } finally {
    engine.dispose();
  }
}
