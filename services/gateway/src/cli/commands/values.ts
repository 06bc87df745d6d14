import { InvalidArgumentError } from "commander";

/** Option value parsers: a wrong value is a usage error (exit 2) naming the option. */

export function positiveNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`must be a positive number, got "${value}"`);
  return n;
}

export function count(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`must be a whole number, got "${value}"`);
  return n;
}

/** For repeatable options (`--option a --option b`). */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}
