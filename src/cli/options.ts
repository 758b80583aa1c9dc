// Validation of numeric command-line options, with messages that name the option.

export function parseIntOption(name: string, raw: string, min: number): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min)
    throw new Error(`${name} must be an integer ≥ ${min}, got '${raw}'`);
  return n;
}

export function parseNumberOption(name: string, raw: string, min: number): number {
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min)
    throw new Error(`${name} must be a number ≥ ${min}, got '${raw}'`);
  return n;
}
