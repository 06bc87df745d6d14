import { createHash } from "node:crypto";
import { GatewayError } from "@gw/contracts";
import type { FastStore } from "@gw/store";

export interface IdempotencyOptions {
  /** How long a finished result answers repeats (delivery.idempotencyWindowSeconds). */
  windowMs: number;
  /**
   * How long a claim whose holder died blocks the key. A live holder extends its claim every
   * third of this, so it may work as long as it needs and is never overtaken.
   */
  claimTtlMs: number;
  /** How often a repeat polls for the first request's result. */
  pollMs?: number;
}

export interface Once<T> {
  value: T;
  /** True when an earlier request with the key produced the value. */
  cached: boolean;
}

/** A stable digest of a request's meaning, for "same key, different request" checks. */
export function fingerprint(parts: unknown): string {
  return createHash("sha256").update(JSON.stringify(parts)).digest("base64url");
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Exactly-once execution per client key across every replica (SPEC §8), on the FastStore:
 * the first request claims the key and does the work; a repeat within the window gets the
 * first result (`cached`), and a repeat while the first is still working waits for it. The
 * same key with a different request (another fingerprint) is refused with CONFLICT. A failure
 * is not remembered: the claim is dropped, so a retry does the work again.
 */
export class IdempotentRunner {
  private readonly pollMs: number;

  constructor(
    private readonly store: FastStore,
    private readonly opts: IdempotencyOptions,
  ) {
    this.pollMs = opts.pollMs ?? 25;
  }

  async run<T>(key: string, print: string, deadline: number, work: () => Promise<T>): Promise<Once<T>> {
    await this.checkFingerprint(key, print);
    const claimKey = `idem:${key}`;
    let wait = this.pollMs;
    for (;;) {
      const state = await this.store.idempotency.begin(claimKey, this.opts.claimTtlMs);
      if (state.status === "done") return { value: JSON.parse(state.result) as T, cached: true };
      if (state.status === "new") {
        let value: T;
        const heartbeat = setInterval(() => {
          void this.store.idempotency.extend(claimKey, this.opts.claimTtlMs).catch(() => undefined);
        }, Math.max(10, this.opts.claimTtlMs / 3));
        try {
          value = await work();
        } catch (err) {
          await this.store.idempotency.abandon(claimKey).catch(() => undefined);
          throw err;
        } finally {
          clearInterval(heartbeat);
        }
        await this.store.idempotency.complete(claimKey, JSON.stringify(value), this.opts.windowMs);
        return { value, cached: false };
      }
      if (Date.now() + wait > deadline) {
        throw new GatewayError("TIMEOUT", "an earlier request with this idempotencyKey is still being delivered");
      }
      await sleep(wait);
      wait = Math.min(wait * 2, 250);
    }
  }

  private async checkFingerprint(key: string, print: string): Promise<void> {
    const fpKey = `idem:fp:${key}`;
    const first = await this.store.values.set(fpKey, print, { ttlMs: this.opts.windowMs, ifAbsent: true });
    if (first) return;
    const existing = await this.store.values.get(fpKey);
    if (existing !== null && existing !== print) {
      throw new GatewayError(
        "CONFLICT",
        "idempotencyKey was already used for a different request; use a new key for a new message",
      );
    }
  }
}
