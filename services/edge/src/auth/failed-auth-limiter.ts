import type { Bus, Subjects, Unsubscribe } from "@gw/bus";
import { AuthBlocked, GatewayError } from "@gw/contracts";
import type { CounterStore } from "@gw/store";

export interface FailedAuthLimits {
  max: number;
  windowMs: number;
}

/** How long the failure that blocks an IP waits for the bus to take the broadcast. */
const ANNOUNCE_WAIT_MS = 1_000;

/** Blocked IPs remembered at most; past it the oldest entries go (a spray of IPs cannot grow memory). */
const MAX_BLOCKED = 100_000;

/**
 * Failed authentications per client IP in a fixed window, counted in the FastStore so every
 * edge on one Redis shares the count (SPEC §5, §8).
 *
 * Checking "is this IP blocked?" must not cost a store round trip on every authenticated
 * request, so blocks are mirrored in memory: the edge whose failure reaches the limit
 * broadcasts the block, and every edge refuses that IP locally until the window ends. An edge
 * that missed the broadcast (it started later, or its bus was down) still learns the block from
 * the counter on that IP's next failure, which it refuses with RATE_LIMITED too.
 */
/** Told of each failed authentication and of each block this edge decides (for logs and metrics). */
export interface FailedAuthWatcher {
  failed(ip: string): void;
  blocked(ip: string, failures: number, forMs: number): void;
}

export class FailedAuthLimiter {
  /** client IP -> when its block ends (this process's clock). */
  private readonly blocked = new Map<string, number>();
  private unsubscribe: Unsubscribe | undefined;

  constructor(
    private readonly counters: CounterStore,
    private readonly limits: FailedAuthLimits,
    private readonly broadcast?: { bus: Bus; subjects: Subjects },
    private readonly watcher?: FailedAuthWatcher,
  ) {
    if (broadcast) {
      this.unsubscribe = broadcast.bus.subscribe(broadcast.subjects.broadcast("auth.blocked"), (data) => {
        try {
          const { clientIp, blockedForMs } = AuthBlocked.decode(data);
          this.block(clientIp, blockedForMs);
        } catch {
          // not ours to crash on: an undecodable broadcast is dropped
        }
      });
    }
  }

  private key(ip: string): string {
    return `authfail:${ip}`;
  }

  /** Throws RATE_LIMITED while the IP is blocked. No store round trip. */
  assertAllowed(ip: string): void {
    const until = this.blocked.get(ip);
    if (until === undefined) return;
    const left = until - Date.now();
    if (left <= 0) {
      this.blocked.delete(ip);
      return;
    }
    throw rateLimited(left);
  }

  /**
   * Counts a failure. The failure that reaches the limit blocks the IP everywhere; one past
   * the limit means the IP was already blocked (this edge had not heard), so it is refused as
   * rate limited rather than unauthorised.
   */
  async recordFailure(ip: string): Promise<void> {
    this.watcher?.failed(ip);
    const { count, resetInMs } = await this.counters.hit(this.key(ip), this.limits.windowMs);
    if (count < this.limits.max) return;
    if (count === this.limits.max) this.watcher?.blocked(ip, count, resetInMs);
    this.block(ip, resetInMs);
    if (count === this.limits.max && this.broadcast) await this.announce(ip, resetInMs);
    if (count > this.limits.max) throw rateLimited(resetInMs);
  }

  /**
   * Tells every edge, and waits (briefly) until the bus has the message before this failure is
   * answered: by the time the client can try again elsewhere, the other edges have heard.
   */
  private async announce(ip: string, forMs: number): Promise<void> {
    const { bus, subjects } = this.broadcast!;
    bus.publish(subjects.broadcast("auth.blocked"), AuthBlocked.encode({ clientIp: ip, blockedForMs: forMs }).finish());
    let timer: NodeJS.Timeout | undefined;
    const giveUp = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ANNOUNCE_WAIT_MS);
    });
    await Promise.race([bus.flush().catch(() => undefined), giveUp]);
    clearTimeout(timer);
  }

  close(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  private block(ip: string, forMs: number): void {
    if (forMs <= 0) return;
    if (this.blocked.size >= MAX_BLOCKED && !this.blocked.has(ip)) this.evict();
    this.blocked.set(ip, Date.now() + forMs);
  }

  private evict(): void {
    const now = Date.now();
    for (const [ip, until] of this.blocked) if (until <= now) this.blocked.delete(ip);
    while (this.blocked.size >= MAX_BLOCKED) {
      const oldest = this.blocked.keys().next().value;
      if (oldest === undefined) break;
      this.blocked.delete(oldest);
    }
  }
}

function rateLimited(leftMs: number): GatewayError {
  const retryAfterSeconds = Math.max(1, Math.ceil(leftMs / 1000));
  return new GatewayError("RATE_LIMITED", `too many failed authentication attempts; retry in ${retryAfterSeconds} s`, {
    details: { retryAfterSeconds },
  });
}
