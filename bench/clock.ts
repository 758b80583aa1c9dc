// Wall and process-CPU time of a stretch of work, shared by the benchmarks. CPU time (every
// thread of the process) is the steadier of the two on a shared, loaded machine.

export interface Cost {
  /** Wall-clock ms. */
  wall: number;
  /** Process CPU ms. */
  cpu: number;
}

/** Starts a clock; calling the result gives the time since, divided by `per` (steps). */
export function startClock(per = 1): () => Cost {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  return () => {
    const used = process.cpuUsage(cpu);
    return {
      wall: (performance.now() - wall) / per,
      cpu: (used.user + used.system) / 1000 / per,
    };
  };
}
