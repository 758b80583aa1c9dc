// Checks that a value is a well-formed VmOutcome (the contract every VM run must keep, even on
// garbage input): returns what is wrong with it, or null when it is fine.
import type { VmOutcome } from "../../src/vm/result.js";

const ERROR_KINDS = new Set(["syntax", "type", "runtime", "limit"]);

function isCount(value: unknown): boolean {
  return typeof value === "number" && Number.isFinite(value) && value >= 0;
}

export function outcomeProblem(outcome: VmOutcome): string | null {
  if (typeof outcome !== "object" || outcome === null) return `not an object: ${String(outcome)}`;
  if (typeof outcome.stdout !== "string") return "stdout is not a string";
  const stats = outcome.stats;
  if (typeof stats !== "object" || stats === null) return "no stats";
  for (const key of ["compileMs", "runMs", "instructions", "memoryBytes"] as const)
    if (!isCount(stats[key])) return `stats.${key} is ${String(stats[key])}`;
  if (outcome.ok === true) {
    if (typeof outcome.text !== "string") return "ok outcome without text";
    if (typeof outcome.value !== "object" || outcome.value === null)
      return "ok outcome without value";
    return null;
  }
  if (outcome.ok !== false) return `ok is ${String((outcome as { ok: unknown }).ok)}`;
  const error = outcome.error;
  if (typeof error !== "object" || error === null) return "failure without error";
  if (!ERROR_KINDS.has(error.kind)) return `error kind ${String(error.kind)}`;
  if (typeof error.message !== "string" || error.message.trim() === "")
    return "empty error message";
  if (!Number.isInteger(error.line) || error.line < 0) return `error line ${String(error.line)}`;
  if (!Number.isInteger(error.column) || error.column < 0)
    return `error column ${String(error.column)}`;
  return null;
}
