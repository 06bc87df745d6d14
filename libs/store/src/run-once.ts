import { hash } from "node:crypto";
import { GatewayError } from "@gw/contracts";
import type { FastStore } from "./fast-store.js";

export interface RunOnceOptions<T> {
  /** How long a finished result answers repeats of its key. */
  windowMs: number;
  /**
   * How long a claim whose holder died blocks the key. A live holder extends its claim every
   * third of this, so it may work as long as it needs and is never overtaken.
   */
  claimTtlMs: number;
  /** How often a repeat first looks again for the first request's result (doubling to 250 ms). */
  pollMs?: number;
  /** How results are kept (default JSON). */
  codec?: { encode(value: T): string; decode(text: string): T };
  /** What a repeat that gave up waiting for a first request still at work is told. */
  stillRunning?: () => GatewayError;
  /** What the same key with a different request is told. */
  conflict?: () => GatewayError;
}

export interface Once<T> {
  value: T;
  /** True when an earlier request with the key produced the value. */
  cached: boolean;
}

/** A stable digest of a request's meaning, for "same key, different request" checks. */
export function fingerprint(parts: unknown): string {
  // One-shot hash: no Hash object per request.
  return hash("sha256", JSON.stringify(parts), "base64url");
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const JSON_CODEC = { encode: (value: unknown) => JSON.stringify(value), decode: (text: string) => JSON.parse(text) as unknown };

/**
 * Exactly-once execution per client key across every replica, on the FastStore's idempotency
 * claims (SPEC §8 for `send`/`poll`; a webhook's delivery id for hooks): the first request claims
 * the key and does the work; a repeat within the window gets the first result (`cached`), and a
 * repeat while the first is still working waits for it. The same key with a different request
 * (another fingerprint) is refused. A failure is not remembered: the claim is dropped, so a
 * retry does the work again.
 */
export class RunOnce<T> {
  private readonly pollMs: number;
  private readonly codec: { encode(value: T): string; decode(text: string): T };

  constructor(
    private readonly store: FastStore,
    private readonly opts: RunOnceOptions<T>,
  ) {
    this.pollMs = opts.pollMs ?? 25;
    this.codec = opts.codec ?? (JSON_CODEC as unknown as { encode(value: T): string; decode(text: string): T });
  }

  /**
   * `work` is told whether this is the key's first use within the window (`fresh`): nothing of an
   * earlier attempt can exist then, so it need not look for any.
   */
  async run(key: string, print: string, deadline: number, work: (fresh: boolean) => Promise<T>): Promise<Once<T>> {
    const claimKey = `idem:${key}`;
    // The fingerprint check and the first claim go out together (one round trip, not two); a
    // claim won by a request with another fingerprint is given back before it is refused.
    const [checked, claim] = await Promise.allSettled([
      this.checkFingerprint(key, print),
      this.store.idempotency.begin(claimKey, this.opts.claimTtlMs),
    ]);
    if (checked.status === "rejected") {
      if (claim.status === "fulfilled" && claim.value.status === "new") await this.store.idempotency.abandon(claimKey).catch(() => undefined);
      throw checked.reason;
    }
    if (claim.status === "rejected") throw claim.reason;
    const fresh = checked.value;
    let state = claim.value;
    for (let wait = this.pollMs; ; wait = Math.min(wait * 2, 250)) {
      if (state.status === "done") return { value: this.codec.decode(state.result), cached: true };
      if (state.status === "new") return { value: await this.claimed(claimKey, () => work(fresh)), cached: false };
      if (Date.now() + wait > deadline) {
        throw this.opts.stillRunning?.() ?? new GatewayError("TIMEOUT", "an earlier request with this key is still being handled");
      }
      await sleep(wait);
      state = await this.store.idempotency.begin(claimKey, this.opts.claimTtlMs);
    }
  }

  private async claimed(claimKey: string, work: () => Promise<T>): Promise<T> {
    const heartbeat = setInterval(() => {
      void this.store.idempotency.extend(claimKey, this.opts.claimTtlMs).catch(() => undefined);
    }, Math.max(10, this.opts.claimTtlMs / 3));
    let value: T;
    try {
      value = await work();
    } catch (err) {
      await this.store.idempotency.abandon(claimKey).catch(() => undefined);
      throw err;
    } finally {
      clearInterval(heartbeat);
    }
    await this.store.idempotency.complete(claimKey, this.codec.encode(value), this.opts.windowMs);
    return value;
  }

  /** True when the key was not used within the window; throws when it was, for another request. */
  private async checkFingerprint(key: string, print: string): Promise<boolean> {
    const fpKey = `idem:fp:${key}`;
    const first = await this.store.values.set(fpKey, print, { ttlMs: this.opts.windowMs, ifAbsent: true });
    if (first) return true;
    const existing = await this.store.values.get(fpKey);
    if (existing !== null && existing !== print) {
      throw this.opts.conflict?.() ?? new GatewayError("CONFLICT", "this key was already used for a different request");
    }
    return false;
  }
}
