// Files named by command-line options: read or opened before any work starts, so a bad path
// fails at once with the option, the file and the reason, and never after generation.
import { openSync, readFileSync } from "node:fs";
import { ReportedFailure } from "./errors.js";

/** Reads a file named by an option, failing with the option and the file's problem. */
export function readOptionFile(option: string, file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    throw new ReportedFailure(`ruffian: ${option}: cannot read ${file}: ${errnoText(err)}`);
  }
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
