// Few-shot prompt files (`ruffian eval --few-shot K,… --prompt-file FILE`): any prompt with a
// task slot, and the worked examples a k-shot run puts into it.
//
// The format, as the top of eval/prompts/seeds-c-regions.txt documents it for users:
//   - lines starting with "#" are comments and are dropped (blank lines are kept);
//   - the prompt is every line before the first "[EXAMPLE]" line; it must hold "[YOUR TASK]"
//     once (the question replaces it, anywhere in its line) and, when any count above 0 is asked,
//     a line holding only "[EXAMPLES]" (the first k examples replace that line, a blank line
//     between them; with k = 0 the line is dropped);
//   - from the first "[EXAMPLE]" line on, each "[EXAMPLE]" line starts one example: the lines up
//     to the next marker (or the end), blank lines around them trimmed, taken as they stand;
//   - a plain (template-less) model's answer also stops where it starts a new line with the text
//     before [YOUR TASK] on its line ("User:" for "User: [YOUR TASK]"): the next task.
import { readFileSync } from "node:fs";

export const TASK_SLOT = "[YOUR TASK]";
export const EXAMPLES_SLOT = "[EXAMPLES]";
export const EXAMPLE_MARKER = "[EXAMPLE]";

export interface PromptExample {
  /** The example's text, as it goes into the prompt. */
  text: string;
  /** The line of its [EXAMPLE] marker (1-based). */
  line: number;
}

export interface PromptFile {
  path: string;
  /** The prompt's lines (comments dropped), each with its line number in the file. */
  prompt: { text: string; line: number }[];
  examples: PromptExample[];
  /** Where the examples start (the first [EXAMPLE] line), or the last line when there are none. */
  examplesLine: number;
  /** The text before [YOUR TASK] on its line, trimmed ("User:"): a plain model's answer stops
   * where it starts a new line with it (the next task); empty when the slot starts its line. */
  taskPrefix: string;
}

/** A problem in a prompt file; its message starts with file:line. */
export class PromptFileError extends Error {
  constructor(path: string, line: number, problem: string) {
    super(`${path}:${line}: ${problem}`);
    this.name = "PromptFileError";
  }
}

/** Parses a prompt file's text (path only names it in errors). */
export function parsePromptFile(path: string, source: string): PromptFile {
  const lines = source.split(/\r?\n/);
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  const prompt: { text: string; line: number }[] = [];
  const examples: PromptExample[] = [];
  let current: { line: number; body: string[] } | undefined;
  let taskLine: number | undefined;
  let taskPrefix = "";
  let examplesSlotLine: number | undefined;
  const close = () => {
    if (!current) return;
    const body = [...current.body];
    while (body.length && body[0]!.trim() === "") body.shift();
    while (body.length && body[body.length - 1]!.trim() === "") body.pop();
    if (body.length === 0) throw new PromptFileError(path, current.line, "this example is empty");
    examples.push({ text: body.join("\n"), line: current.line });
  };
  lines.forEach((text, i) => {
    const line = i + 1;
    if (text.startsWith("#")) return;
    if (text.trim() === EXAMPLE_MARKER) {
      close();
      current = { line, body: [] };
      return;
    }
    if (current) {
      for (const slot of [TASK_SLOT, EXAMPLES_SLOT]) {
        if (text.includes(slot)) {
          throw new PromptFileError(
            path,
            line,
            `${slot} inside an example (example of line ${current.line}); slots belong in the prompt, before the first ${EXAMPLE_MARKER} line`,
          );
        }
      }
      current.body.push(text);
      return;
    }
    const tasks = text.split(TASK_SLOT).length - 1;
    if (tasks > 0) {
      if (taskLine !== undefined || tasks > 1) {
        throw new PromptFileError(
          path,
          line,
          `a second ${TASK_SLOT} slot (the first is on line ${taskLine ?? line}); the prompt takes one`,
        );
      }
      taskLine = line;
      taskPrefix = text.slice(0, text.indexOf(TASK_SLOT)).trim();
    }
    if (text.includes(EXAMPLES_SLOT)) {
      if (text.trim() !== EXAMPLES_SLOT) {
        throw new PromptFileError(
          path,
          line,
          `${EXAMPLES_SLOT} must be alone on its line (the examples replace the whole line)`,
        );
      }
      if (examplesSlotLine !== undefined) {
        throw new PromptFileError(
          path,
          line,
          `a second ${EXAMPLES_SLOT} line (the first is line ${examplesSlotLine})`,
        );
      }
      examplesSlotLine = line;
    }
    prompt.push({ text, line });
  });
  close();
  const examplesLine = examples[0]?.line ?? Math.max(1, lines.length);
  if (taskLine === undefined) {
    const last = prompt.length ? prompt[prompt.length - 1]!.line : examplesLine;
    throw new PromptFileError(
      path,
      last,
      `the prompt (up to this line) has no ${TASK_SLOT} slot for the question`,
    );
  }
  return { path, prompt, examples, examplesLine, taskPrefix };
}

/** Reads and parses a prompt file. */
export function readPromptFile(path: string): PromptFile {
  let source: string;
  try {
    source = readFileSync(path, "utf8");
  } catch (err) {
    throw new PromptFileError(path, 1, `cannot read the prompt file (${(err as Error).message})`);
  }
  return parsePromptFile(path, source);
}

/** Checks that the file can serve every asked example count. */
export function checkShotCounts(file: PromptFile, counts: readonly number[]): void {
  const most = Math.max(0, ...counts);
  if (most === 0) return;
  if (!file.prompt.some((l) => l.text.trim() === EXAMPLES_SLOT)) {
    const last = file.prompt[file.prompt.length - 1]?.line ?? 1;
    throw new PromptFileError(
      file.path,
      last,
      `the prompt (up to this line) has no ${EXAMPLES_SLOT} line, but --few-shot asks for ${most} examples`,
    );
  }
  if (file.examples.length < most) {
    const n = file.examples.length;
    throw new PromptFileError(
      file.path,
      file.examplesLine,
      `${n === 0 ? `no ${EXAMPLE_MARKER} examples` : `${n} example${n === 1 ? "" : "s"} from this line on`}, but --few-shot asks for ${most}`,
    );
  }
}

/** The prompt for one question with the file's first k examples. */
export function fillPrompt(file: PromptFile, k: number, question: string): string {
  const out: string[] = [];
  for (const { text } of file.prompt) {
    if (text.trim() === EXAMPLES_SLOT) {
      if (k > 0)
        out.push(
          file.examples
            .slice(0, k)
            .map((e) => e.text)
            .join("\n\n"),
        );
    } else {
      out.push(text.split(TASK_SLOT).join(question));
    }
  }
  return out.join("\n").trim();
}
