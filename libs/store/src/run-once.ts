import { hash, randomUUID } from "node:crypto";
import { GatewayError, readStoredJson } from "@gw/contracts";
import { type BackoffPolicy, retryDelay, sleep } from "@gw/runtime";
import type { z } from "zod";
import type { FastStore } from "./fast-store.js";

/** How results are kept: `decode` throws for a stored text that is not a T. */
export interface RunOnceCodec<T> {
  encode(value: T): string;
  decode(text: string): T;
}

/**
 * How a finished result is kept and read back, never cast: JSON read through `schema`, or the
 * caller's own `codec` (its decode checks what it reads).
 */
export type RunOnceResults<T> = { schema: z.ZodType<T>; codec?: never } | { codec: RunOnceCodec<T>; schema?: never };

export type RunOnceOptions<T> = RunOnceSettings & RunOnceResults<T>;

export interface RunOnceSettings {
  /** How long a finished result answers repeats of its key. */
  windowMs: number;
  /**
   * How long a claim whose holder died blocks the key. A live holder extends its claim every
   * third of this, so it may work as long as it needs and is never overtaken.
   */
  claimTtlMs: number;
  /** How often a repeat first looks again for the first request's result (doubling to 250 ms). */
  pollMs?: number;
  /** What a repeat that gave up waiting for a first request still at work is told. */
  stillRunning?: () => GatewayError;
  /** What the same key with a different request is told. */
  conflict?: () => GatewayError;
  /**
   * Whether a failure also forgets the request (its fingerprint), so the key may then carry a
   * different one: a webhook sender corrects a refused delivery and retries it under the same id.
   * Off by default, for work whose failed attempt may leave effects only the same request may
   * finish (delivery keeps each sent part per key). When on, `fresh` is always false: a forgotten
   * attempt leaves no trace to tell it by.
   */
  forgetFailedRequest?: boolean;
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

/** A claim this request won: its key and the holder it names. */
interface Claim {
  claimKey: string;
  holder: string;
}

function jsonCodec<T>(schema: z.ZodType<T>): RunOnceCodec<T> {
  return {
    encode: (value) => JSON.stringify(value),
    decode: (text) => {
      const read = readStoredJson(text, schema);
      if (!read.ok) throw new Error(read.problem);
      return read.value;
    },
  };
}

/**
 * Exactly-once execution per client key across every replica, on the FastStore's idempotency
 * claims (SPEC §8 for `send`/`poll`; a webhook's delivery id for hooks): the first request claims
 * the key and does the work; a repeat within the window gets the first result (`cached`), and a
 * repeat while the first is still working waits for it. The same key with a different request
 * (another fingerprint) is refused. A failure is not remembered: the claim is dropped, so a
 * retry does the work again (and with `forgetFailedRequest`, a different request may).
 *
 * With `forgetFailedRequest` the fingerprint belongs to whoever holds the claim: a holder that
 * fails deletes it before it drops the claim, and whoever wins the claim after that writes its
 * own again (or is refused, when a different request wrote one first). Nothing overwrites a
 * fingerprint (writes are set-if-absent), so while a holder works the record is its request's.
 */
export class RunOnce<T> {
  private readonly pollMs: number;
  private readonly codec: RunOnceCodec<T>;
  private readonly forget: boolean;

  constructor(
    private readonly store: FastStore,
    private readonly opts: RunOnceOptions<T>,
  ) {
    this.pollMs = opts.pollMs ?? 25;
    this.codec = opts.codec ?? jsonCodec(opts.schema);
    this.forget = opts.forgetFailedRequest === true;
  }

  /**
   * `work` is told whether this is the key's first use within the window (`fresh`): nothing of an
   * earlier attempt can exist then, so it need not look for any.
   */
  async run(key: string, print: string, deadline: number, work: (fresh: boolean) => Promise<T>): Promise<Once<T>> {
    const claimKey = `idem:${key}`;
    // This request's claims name it, so a late heartbeat or abandon never touches another's.
    const holder = randomUUID();
    // The fingerprint check and the first claim go out together (one round trip, not two); a
    // claim won by a request with another fingerprint is given back before it is refused.
    const [checked, claim] = await Promise.allSettled([
      this.checkFingerprint(key, print),
      this.store.idempotency.begin(claimKey, this.opts.claimTtlMs, holder),
    ]);
    if (checked.status === "rejected") {
      if (claim.status === "fulfilled" && claim.value.status === "new") await this.store.idempotency.abandon(claimKey, holder).catch(() => undefined);
      throw checked.reason;
    }
    if (claim.status === "rejected") throw claim.reason;
    const first = checked.value;
    const fresh = first && !this.forget;
    let state = claim.value;
    // Only a state read along with the fingerprint check is known to go with it: after a wait,
    // the request waited for may have failed and forgotten its fingerprint.
    let waited = false;
    const poll: BackoffPolicy = { baseMs: this.pollMs, capMs: 250, jitter: "none" };
    for (let attempt = 0; ; attempt++) {
      const wait = retryDelay(attempt, poll);
      if (state.status === "done") {
        // The result may be another request's, one that took the key after a failure.
        if (this.forget && waited) await this.assertSameRequest(key, print);
        return { value: this.decode(state.result), cached: true };
      }
      if (state.status === "new") {
        // Unless this request has just written it, the fingerprint may be gone with a failed holder.
        if (this.forget && (waited || !first)) await this.reclaimFingerprint(key, { claimKey, holder }, print);
        return { value: await this.claimed(key, { claimKey, holder }, print, () => work(fresh)), cached: false };
      }
      if (Date.now() + wait > deadline) {
        throw this.opts.stillRunning?.() ?? new GatewayError("TIMEOUT", "an earlier request with this key is still being handled");
      }
      await sleep(wait);
      waited = true;
      state = await this.store.idempotency.begin(claimKey, this.opts.claimTtlMs, holder);
    }
  }

  private async claimed(key: string, claim: Claim, print: string, work: () => Promise<T>): Promise<T> {
    const heartbeat = setInterval(() => {
      this.store.idempotency.extend(claim.claimKey, this.opts.claimTtlMs, claim.holder).catch(() => undefined);
    }, Math.max(10, this.opts.claimTtlMs / 3));
    let value: T;
    try {
      value = await work();
    } catch (err) {
      // The fingerprint goes first: once the claim is dropped, someone else's may be written.
      if (this.forget) await this.forgetFingerprint(key, print).catch(() => undefined);
      await this.store.idempotency.abandon(claim.claimKey, claim.holder).catch(() => undefined);
      throw err;
    } finally {
      clearInterval(heartbeat);
    }
    await this.store.idempotency.complete(claim.claimKey, this.codec.encode(value), this.opts.windowMs);
    return value;
  }

  /** True when the key was not used within the window; throws when it was, for another request. */
  private async checkFingerprint(key: string, print: string): Promise<boolean> {
    const fpKey = `idem:fp:${key}`;
    const first = await this.store.values.set(fpKey, print, { ttlMs: this.opts.windowMs, ifAbsent: true });
    if (first) return true;
    await this.assertSameRequest(key, print);
    return false;
  }

  private async assertSameRequest(key: string, print: string): Promise<void> {
    const existing = await this.store.values.get(`idem:fp:${key}`);
    if (existing !== null && existing !== print) throw this.conflict();
  }

  /**
   * A claim won after waiting, or alongside a fingerprint that was already there: the holder
   * that failed before may have deleted that fingerprint, so this request writes its own, unless
   * a different request wrote one first (then the claim goes back and this one is refused).
   */
  private async reclaimFingerprint(key: string, claim: Claim, print: string): Promise<void> {
    const fpKey = `idem:fp:${key}`;
    try {
      // Set-if-absent, else read: absent again between the two only if the record just lapsed.
      for (;;) {
        if (await this.store.values.set(fpKey, print, { ttlMs: this.opts.windowMs, ifAbsent: true })) return;
        const existing = await this.store.values.get(fpKey);
        if (existing === print) return;
        if (existing !== null) throw this.conflict();
      }
    } catch (err) {
      await this.store.idempotency.abandon(claim.claimKey, claim.holder).catch(() => undefined);
      throw err;
    }
  }

  /**
   * Deletes the fingerprint if it is this request's. Read, then delete, is safe here: the caller
   * still holds the claim, and nothing but a failing holder deletes a fingerprint, nor writes one
   * over another.
   */
  private async forgetFingerprint(key: string, print: string): Promise<void> {
    const fpKey = `idem:fp:${key}`;
    if ((await this.store.values.get(fpKey)) === print) await this.store.values.delete(fpKey);
  }

  /**
   * A stored result that does not decode cannot answer the repeat, and doing the work again
   * would do it twice: the repeat is told INTERNAL, naming why, until the window lets the key go.
   */
  private decode(text: string): T {
    try {
      return this.codec.decode(text);
    } catch (err) {
      throw new GatewayError("INTERNAL", `the stored result of the first request with this key does not decode: ${(err as Error).message}`);
    }
  }

  private conflict(): GatewayError {
    return this.opts.conflict?.() ?? new GatewayError("CONFLICT", "this key was already used for a different request");
  }
}
