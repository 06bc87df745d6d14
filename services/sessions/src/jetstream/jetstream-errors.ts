import type { GatewayError } from "@gw/contracts";
import { jetStreamError } from "@gw/store";

export { isSequenceConflict } from "@gw/store";

/** NATS away -> UNAVAILABLE (retryable); anything else -> INTERNAL with the cause kept. */
export function storeError(err: unknown, what: string): GatewayError {
  return jetStreamError(err, `session store ${what}`);
}

/** Jittered pause between retries of a lost race, so racing replicas spread out. */
export function backoff(attempt: number): Promise<void> {
  const ms = Math.min(50, 1 + attempt * 2) * Math.random();
  return new Promise((resolve) => setTimeout(resolve, ms));
}
