// What the robustness parent and child say to each other, and the sandbox bounds both agree on.
// Small bounds keep thousands of runs, hostile ones included, well under a minute in CI.

export const ROBUSTNESS_LIMITS = {
  maxInstructions: 200_000,
  wallClockMs: 1_000,
  maxOutputBytes: 4_096,
  memoryBytes: 16 * 1024 * 1024,
};

export type ChildMessage =
  | { type: "start"; index: number }
  | { type: "result"; index: number; status: string; problem: string | null; ms: number }
  | { type: "health"; ok: boolean; detail: string };
