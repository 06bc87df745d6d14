import { GatewayError } from "@gw/contracts";
import type { CounterStore } from "@gw/store";

export interface FailedAuthLimits {
  max: number;
  windowMs: number;
}

/**
 * Failed authentications per client IP in a fixed window, counted in the FastStore so
 * every edge on one Redis shares the count (SPEC §5, §8).
 */
export class FailedAuthLimiter {
  constructor(
    private readonly counters: CounterStore,
    private readonly limits: FailedAuthLimits,
  ) {}

  private key(ip: string): string {
    return `authfail:${ip}`;
  }

  /** Throws RATE_LIMITED once the IP has reached the limit in the current window. */
  async assertAllowed(ip: string): Promise<void> {
    const { count, resetInMs } = await this.counters.peek(this.key(ip));
    if (count >= this.limits.max) {
      const retryAfterSeconds = Math.max(1, Math.ceil(resetInMs / 1000));
      throw new GatewayError(
        "RATE_LIMITED",
        `too many failed authentication attempts; retry in ${retryAfterSeconds} s`,
        {
          details: { retryAfterSeconds },
        },
      );
    }
  }

  async recordFailure(ip: string): Promise<void> {
    await this.counters.hit(this.key(ip), this.limits.windowMs);
  }
}
