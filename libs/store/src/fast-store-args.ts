import { GatewayError } from "@gw/contracts";

/** Both adapters reject the same bad arguments, so callers see one behaviour in both modes. */
export function durationMs(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new GatewayError("INVALID_REQUEST", `${name} must be a positive number of milliseconds`);
  }
  // Redis takes whole milliseconds; rounding up keeps a 0.5 ms window from becoming 0 (= no TTL).
  return Math.ceil(value);
}

export function increment(by: number | undefined): number {
  const value = by ?? 1;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new GatewayError("INVALID_REQUEST", "by must be a positive integer");
  }
  return value;
}
