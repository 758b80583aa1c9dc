// Files named by command-line options: read or opened before any work starts, so a bad path
// fails at once with the option, the file and the reason, and never after generation.
import { openSync, readFileSync } from "node:fs";
import { ReportedFailure, UsageError } from "./errors.js";
import { parseChatTemplate } from "../engine/chat-template.js";

/** Reads a file named by an option, failing with the option and the file's problem. */
export function readOptionFile(option: string, file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    throw new ReportedFailure(`ruffian: ${option}: cannot read ${file}: ${errnoText(err)}`);
  }
}

/**
 * `--chat-template FILE`: the Jinja template's text, read and parsed before any model loads. A
 * file that cannot be read or does not parse is a usage error (exit 2) naming the file and, for
 * a parse error, @huggingface/jinja's message (it reports no line or column).
 */
export function readChatTemplateFile(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new UsageError(`--chat-template: cannot read ${file}: ${errnoText(err)}`);
  }
  const parsed = parseChatTemplate(text);
  if (parsed instanceof Error) {
    // The parser reads past the end of an unclosed block and fails with a TypeError.
    const hint = parsed instanceof TypeError ? " (an unclosed {% if %} or {% for %} block?)" : "";
    throw new UsageError(
      `--chat-template: ${file} is not a Jinja template this can render: ${parsed.message}${hint}`,
    );
  }
  return text;
}

/** Opens an output file named by an option before any work starts, so a bad path fails first. */
export function openOutputFile(option: string, file: string): number {
  try {
    return openSync(file, "w");
  } catch (err) {
    throw new ReportedFailure(`ruffian: ${option}: cannot write ${file}: ${errnoText(err)}`);
  }
}

function errnoText(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  const known: Record<string, string> = {
    ENOENT: "no such file or directory",
    EACCES: "permission denied",
    EISDIR: "is a directory",
    ENOTDIR: "a parent is not a directory",
  };
  return (e.code && known[e.code]) ?? e.message;
}
