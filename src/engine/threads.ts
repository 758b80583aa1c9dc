// Thread count for llama.cpp, derived from the machine's real core count.
// llama.cpp's default (4) on a 2-core machine made a tiny model ~700x slower; oversubscription is fatal.
import { availableParallelism } from "node:os";

/**
 * Leaves one core for the JavaScript thread (decode loop, VM, I/O): on this project's 2-core
 * machines that is 1 thread, which measured fastest for the small models (0.7 ms/token vs 12+ ms
 * with 2). An explicit RUFFIAN_THREADS overrides it for experiments.
 */
export function defaultThreadCount(): number {
  const override = Number(process.env.RUFFIAN_THREADS);
  if (Number.isInteger(override) && override > 0) return override;
  return Math.max(1, availableParallelism() - 1);
}
