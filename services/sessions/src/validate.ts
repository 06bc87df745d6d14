import { GatewayError, sessionKeyProblem } from "@gw/contracts";

/**
 * Bus requests are validated again here, not only at the edge: the agent runner, hooks and
 * delivery call these RPCs directly.
 */
export function checkKey(key: string): string {
  const problem = sessionKeyProblem(key);
  if (problem !== undefined) throw new GatewayError("INVALID_REQUEST", problem);
  return key;
}

/** 0 (unset on the wire) means the default; anything past `max` is refused, not clamped. */
export function checkLimit(name: string, value: number, fallback: number, max: number): number {
  if (value === 0) return fallback;
  if (!Number.isInteger(value) || value < 0 || value > max)
    throw new GatewayError("INVALID_REQUEST", `${name} must be an integer between 1 and ${max}`);
  return value;
}

export const ENTRY_ROLES = new Set(["user", "assistant", "tool", "system"]);
export const MAX_APPEND_ENTRIES = 256;
