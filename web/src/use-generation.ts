// Re-renders a component whenever a Generation changes (each streamed chunk, each animation frame).
import { useEffect, useState } from "preact/hooks";
import type { Generation } from "./generation.js";

export function useGeneration(generation: Generation | null): void {
  const [, setVersion] = useState(0);
  useEffect(() => generation?.subscribe(() => setVersion((n) => n + 1)), [generation]);
}
