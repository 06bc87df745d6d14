import { setTimeout as sleep } from "node:timers/promises";
import type { Bus, Subjects, Unsubscribe } from "@gw/bus";
import { AuthBlocked, GatewayError } from "@gw/contracts";
import type { CounterStore, WindowCount } from "@gw/store";
import { LapsingIpMap } from "./lapsing-ip-map.js";

export interface FailedAuthLimits {
  max: number;
  windowMs: number;
}

/** How long the failure that blocks an IP waits for the bus to take the broadcast. */
const ANNOUNCE_WAIT_MS = 1_000;

/**
 * What one check under way adds to its IP's counter (given back when it ends); a failure adds 1.
 * One atomic read of the counter then tells every edge both how many checks failed
 * (count % PENDING) and how many are being tried right now (count / PENDING). Failures stay far
 * below it: counting stops at the limit.
 */
const PENDING = 2 ** 32;

/**
 * How long a check waits for other edges' checks of its IP to end (when they hold the rest of
 * its budget), trying again every BUSY_RETRY_MS or so (jittered, so edges do not retry in step).
 */
const BUSY_WAIT_MS = 1_000;
const BUSY_RETRY_MS = 20;

/** Told of each failed authentication and of each block this edge decides (for logs and metrics). */
export interface FailedAuthWatcher {
  failed(ip: string): void;
  blocked(ip: string, failures: number, forMs: number): void;
}

/** One IP's checks under way on this edge, and the checks waiting for a turn. */
interface Running {
  count: number;
  /** A check without a slot is under way: the others wait until its failure, if any, is counted. */
  loose: boolean;
  waiting: Array<() => void>;
}

/**
 * Failed authentications per client IP in a fixed window, counted in the FastStore so every
 * edge on one Redis shares the count (SPEC §5, §8).
 *
 * Checking "is this IP blocked?" must not cost a store round trip on every authenticated
 * request, so blocks are mirrored in memory: the edge whose failure reaches the limit
 * broadcasts the block, and every edge refuses that IP locally until the window ends. An edge
 * that missed the broadcast (it started later, or its bus was down) still learns the block from
 * the counter on that IP's next check or failure, which it refuses with RATE_LIMITED too.
 *
 * Secrets are checked through `check`, so that requests arriving together cannot all be
 * checked before the first failure is counted: see there.
 */
export class FailedAuthLimiter {
  /** client IP -> when its block ends (this process's clock). */
  private readonly blocked = new LapsingIpMap<{ until: number }>();
  /** client IP -> the failures its counter last showed, until that window ends. */
  private readonly failures = new LapsingIpMap<{ count: number; until: number }>();
  private readonly running = new Map<string, Running>();
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
    const block = this.blocked.get(ip);
    if (block !== undefined) throw rateLimited(block.until - Date.now());
  }

  /**
   * Runs one check of a secret `ip` presented, and counts it when `isFailure` says it failed.
   * A check starts only while the IP's failures plus its checks under way are below the limit,
   * so no more than the limit's number of checks fail in a window however many arrive at once:
   * the others wait for a turn here, or are refused RATE_LIMITED unchecked (a right secret too,
   * once the IP is blocked). A check that throws counts as nothing.
   *
   * While this edge knows of no failure of the IP, its checks run one at a time without a slot,
   * so a success costs no store round trip; the next starts once a failure has been counted. Once
   * the IP has failures, each check first takes a slot in the shared counter (one round trip),
   * given back when it succeeds, so edges share the budget. The one check an edge makes without
   * a slot can be one too many when other edges spent the budget meanwhile (docs/decisions.md).
   */
  async check<T>(ip: string, run: () => Promise<T>, isFailure: (result: T) => boolean): Promise<T> {
    const reserved = await this.admit(ip);
    let result: T;
    try {
      result = await run();
    } catch (err) {
      this.release(ip, reserved);
      throw err;
    }
    if (isFailure(result)) await this.settleFailure(ip, reserved);
    else this.release(ip, reserved);
    return result;
  }

  /**
   * Counts a failure found without `check` (one that guessed nothing, or a check made
   * elsewhere). The failure that reaches the limit blocks the IP everywhere; one past the limit
   * means the IP was already blocked (this edge had not heard), so it is refused as rate limited
   * rather than unauthorised.
   */
  async recordFailure(ip: string): Promise<void> {
    this.watcher?.failed(ip);
    const window = await this.counters.hit(this.key(ip), this.limits.windowMs);
    await this.judge(ip, this.tally(ip, window), window.resetInMs);
  }

  close(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  /** Waits for a turn, then takes a slot in the shared counter unless the fast path applies; returns whether it took one. */
  private async admit(ip: string): Promise<boolean> {
    let giveUpAt: number | undefined;
    for (;;) {
      try {
        this.assertAllowed(ip);
      } catch (err) {
        this.dropIfIdle(ip);
        throw err;
      }
      const known = this.failures.get(ip)?.count ?? 0;
      const here = this.runningOf(ip);
      if (here.loose || (here.count > 0 && here.count + known >= this.limits.max)) {
        await new Promise<void>((resolve) => here.waiting.push(resolve));
        continue;
      }
      here.count++;
      if (here.count === 1 && known === 0) {
        here.loose = true;
        return false;
      }
      if (await this.reserve(ip)) return true;
      giveUpAt ??= Date.now() + BUSY_WAIT_MS;
      if (Date.now() >= giveUpAt) throw tooManyUnderWay();
      await sleep(BUSY_RETRY_MS * (0.5 + Math.random()));
    }
  }

  /**
   * Takes a slot when the IP's failures and checks under way, on every edge, leave one. Returns
   * false when other edges' checks hold the rest (worth waiting for); throws when it is blocked.
   */
  private async reserve(ip: string): Promise<boolean> {
    let window: WindowCount;
    try {
      window = await this.counters.hit(this.key(ip), this.limits.windowMs, PENDING);
    } catch (err) {
      this.leave(ip);
      throw err;
    }
    const failures = this.learn(ip, window);
    if (failures + Math.floor(window.count / PENDING) <= this.limits.max && failures < this.limits.max) return true;
    void this.counters.giveBack(this.key(ip), PENDING).catch(() => undefined);
    if (failures >= this.limits.max) this.block(ip, window.resetInMs);
    this.leave(ip);
    if (failures < this.limits.max) return false;
    throw rateLimited(window.resetInMs);
  }

  /**
   * A check that succeeded (or threw) gives its slot back without waiting for the store: a give
   * back that fails only holds one slot of the IP's budget until its window ends.
   */
  private release(ip: string, reserved: boolean): void {
    if (reserved) void this.counters.giveBack(this.key(ip), PENDING).catch(() => undefined);
    this.leave(ip, !reserved);
  }

  /**
   * Counts the failure, and gives a reserved check's slot back in the same round trip (sent
   * after it, so the count it returns still holds the slot and no other check took its place).
   */
  private async settleFailure(ip: string, reserved: boolean): Promise<void> {
    this.watcher?.failed(ip);
    let window: WindowCount;
    try {
      const counted = this.counters.hit(this.key(ip), this.limits.windowMs);
      if (reserved) void this.counters.giveBack(this.key(ip), PENDING).catch(() => undefined);
      window = await counted;
    } catch (err) {
      this.leave(ip, !reserved);
      throw err;
    }
    const failures = this.tally(ip, window);
    this.leave(ip, !reserved);
    await this.judge(ip, failures, window.resetInMs);
  }

  /** Learns the count a failure left; the failure that reaches the limit blocks the IP here. */
  private tally(ip: string, window: WindowCount): number {
    const failures = this.learn(ip, window);
    if (failures === this.limits.max) this.watcher?.blocked(ip, failures, window.resetInMs);
    if (failures >= this.limits.max) this.block(ip, window.resetInMs);
    return failures;
  }

  /** Tells the other edges of the block this failure made; refuses a failure past the limit. */
  private async judge(ip: string, failures: number, resetInMs: number): Promise<void> {
    if (failures === this.limits.max && this.broadcast) await this.announce(ip, resetInMs);
    if (failures > this.limits.max) throw rateLimited(resetInMs);
  }

  private learn(ip: string, { count, resetInMs }: WindowCount): number {
    const failures = count % PENDING;
    if (failures > 0 && resetInMs > 0) this.failures.set(ip, { count: failures, until: Date.now() + resetInMs });
    else this.failures.delete(ip);
    return failures;
  }

  private runningOf(ip: string): Running {
    let here = this.running.get(ip);
    if (here === undefined) {
      here = { count: 0, loose: false, waiting: [] };
      this.running.set(ip, here);
    }
    return here;
  }

  /** A check ended: as many waiting ones as can start get their turn. */
  private leave(ip: string, loose = false): void {
    const here = this.running.get(ip);
    if (here === undefined) return;
    here.count--;
    if (loose) here.loose = false;
    const known = this.failures.get(ip)?.count ?? 0;
    // A clean IP's next check runs alone; with nothing under way, one always gets its turn.
    const budget = known === 0 && here.count === 0 ? 1 : this.limits.max - known - here.count;
    const free = here.count === 0 ? Math.max(1, budget) : budget;
    for (let i = 0; i < free && here.waiting.length > 0; i++) here.waiting.shift()!();
    this.dropIfIdle(ip);
  }

  private dropIfIdle(ip: string): void {
    const here = this.running.get(ip);
    if (here !== undefined && here.count <= 0 && here.waiting.length === 0) this.running.delete(ip);
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

  /** Blocks the IP here; the checks waiting for a turn are refused at once. */
  private block(ip: string, forMs: number): void {
    if (forMs <= 0) return;
    this.blocked.set(ip, { until: Date.now() + forMs });
    for (const wake of this.running.get(ip)?.waiting.splice(0) ?? []) wake();
  }
}

function rateLimited(leftMs: number): GatewayError {
  const retryAfterSeconds = Math.max(1, Math.ceil(leftMs / 1000));
  return new GatewayError("RATE_LIMITED", `too many failed authentication attempts; retry in ${retryAfterSeconds} s`, {
    details: { retryAfterSeconds },
  });
}

function tooManyUnderWay(): GatewayError {
  return new GatewayError("RATE_LIMITED", "too many authentication attempts under way from this address; retry in 1 s", {
    details: { retryAfterSeconds: 1 },
  });
}
