import { randomBytes } from "node:crypto";
import { GatewayError, type PairRequestView } from "@gw/contracts";
import type { FastStore } from "@gw/store";
import { z } from "zod";

/** A pending pairing request, with where its socket is (so the approver can reach it). */
const PendingSchema = z.object({
  requestId: z.string(),
  deviceId: z.string(),
  name: z.string(),
  publicKey: z.string().optional(),
  keyFingerprint: z.string().optional(),
  clientIp: z.string(),
  edgeId: z.string(),
  connId: z.string(),
  requestedAt: z.number(),
  expiresAt: z.number(),
});
export type PendingPairing = z.infer<typeof PendingSchema>;

export type NewPairing = Omit<PendingPairing, "requestId" | "requestedAt" | "expiresAt">;

export interface PairingLimits {
  ttlMs: number;
  maxPerIp: number;
  maxTotal: number;
}

/** How long an approval or rejection holds a request before it lapses (a crashed resolver). */
const CLAIM_MS = 30_000;

/**
 * A request's records outlive its expiry by this much, so the edge holding its socket (whose
 * timer fires at `expiresAt`) still finds it to end it and tell everyone; if that edge died,
 * the store forgets the request this much later. Resolvers refuse it from `expiresAt` on.
 */
const EXPIRY_GRACE_MS = 30_000;

const reqKey = (id: string) => `pair:req:${id}`;
const deviceKey = (deviceId: string) => `pair:dev:${deviceId}`;
const claimKey = (id: string) => `pair:claim:${id}`;
const ipKey = (ip: string) => `pair:ip:${ip}`;
const ALL = "pair:all";

export function pairRequestView(pending: PendingPairing): PairRequestView {
  const { requestId, deviceId, name, keyFingerprint, clientIp, requestedAt, expiresAt } = pending;
  const view: PairRequestView = { requestId, deviceId, name, clientIp, requestedAt, expiresAt };
  if (keyFingerprint !== undefined) view.keyFingerprint = keyFingerprint;
  return view;
}

/**
 * Pending pairing requests in the FastStore (Redis), shared by every edge: each expires with its
 * TTL, one device has at most one, and one client IP at most `maxPerIp` at a time. Limits are
 * enforced add-then-count, so two racing requests can both be refused but never both admitted
 * past the limit.
 */
export class PairingBook {
  constructor(
    private readonly store: FastStore,
    private readonly limits: PairingLimits,
  ) {}

  get ttlMs(): number {
    return this.limits.ttlMs;
  }

  async open(input: NewPairing, now = Date.now()): Promise<PendingPairing> {
    const pending: PendingPairing = {
      ...input,
      // Hex, not base64url: an id may not begin with "-", which `gateway devices approve <id>`
      // would take for an option (one id in 64 did).
      requestId: randomBytes(12).toString("hex"),
      requestedAt: now,
      expiresAt: now + this.limits.ttlMs,
    };
    const { values, sets } = this.store;
    const ttlMs = this.limits.ttlMs + EXPIRY_GRACE_MS;
    if (!(await values.set(deviceKey(pending.deviceId), pending.requestId, { ttlMs, ifAbsent: true }))) {
      throw new GatewayError("CONFLICT", `a pairing request for device ${pending.deviceId} is pending already`);
    }
    await values.set(reqKey(pending.requestId), JSON.stringify(pending), { ttlMs });
    await Promise.all([sets.add(ipKey(pending.clientIp), pending.requestId, ttlMs), sets.add(ALL, pending.requestId, ttlMs)]);
    const [fromIp, total] = await Promise.all([this.live(ipKey(pending.clientIp), now), this.live(ALL, now)]);
    const over =
      fromIp.length > this.limits.maxPerIp
        ? { limit: "pairing.maxPendingPerIp", max: this.limits.maxPerIp, what: "from this address" }
        : total.length > this.limits.maxTotal
          ? { limit: "pairing.maxPending", max: this.limits.maxTotal, what: "in all" }
          : undefined;
    if (over !== undefined) {
      await this.close(pending);
      throw new GatewayError("RATE_LIMITED", `too many pending pairing requests ${over.what} (max ${over.max}); try again later`, {
        details: { limit: over.limit, max: over.max, retryAfterSeconds: Math.ceil(this.limits.ttlMs / 1000) },
      });
    }
    return pending;
  }

  async get(requestId: string): Promise<PendingPairing | null> {
    const text = await this.store.values.get(reqKey(requestId));
    return text === null ? null : parse(text);
  }

  /** Every pending request, oldest first. */
  async list(now = Date.now()): Promise<PendingPairing[]> {
    return (await this.live(ALL, now)).sort((a, b) => a.requestedAt - b.requestedAt);
  }

  /**
   * Takes a request for resolving (approve, reject, expire, withdraw): exactly one caller wins.
   * NOT_FOUND when there is no such pending request (for a resolver, also once it has expired;
   * `ending: true` is the expiry or withdrawal itself), CONFLICT when another caller has it.
   */
  async claim(requestId: string, opts: { ending?: boolean; now?: number } = {}): Promise<PendingPairing> {
    const pending = await this.get(requestId);
    if (pending === null || (opts.ending !== true && pending.expiresAt <= (opts.now ?? Date.now()))) {
      throw new GatewayError("NOT_FOUND", `no pending pairing request ${requestId} (it expired, was resolved or withdrawn)`);
    }
    if (!(await this.store.values.set(claimKey(requestId), "1", { ttlMs: CLAIM_MS, ifAbsent: true }))) {
      throw new GatewayError("CONFLICT", `pairing request ${requestId} is being resolved already`);
    }
    return pending;
  }

  /** Gives a claimed request back (its resolution failed before anything changed). */
  async release(requestId: string): Promise<void> {
    await this.store.values.delete(claimKey(requestId));
  }

  /** Forgets a request everywhere: it is resolved, expired or withdrawn. */
  async close(pending: PendingPairing): Promise<void> {
    const { values, sets } = this.store;
    await values.writeAll([
      { key: reqKey(pending.requestId), value: null },
      { key: deviceKey(pending.deviceId), value: null },
    ]);
    await Promise.all([sets.remove(ipKey(pending.clientIp), pending.requestId), sets.remove(ALL, pending.requestId)]);
  }

  /** The set's requests that have not expired; members whose record is gone are dropped from it. */
  private async live(setKey: string, now: number): Promise<PendingPairing[]> {
    const ids = await this.store.sets.members(setKey);
    if (ids.length === 0) return [];
    const texts = await this.store.values.getMany(ids.map(reqKey));
    const found: PendingPairing[] = [];
    const gone: string[] = [];
    texts.forEach((text, i) => {
      if (text === null) gone.push(ids[i]!);
      else found.push(parse(text));
    });
    await Promise.all(gone.map((id) => this.store.sets.remove(setKey, id)));
    return found.filter((pending) => pending.expiresAt > now);
  }
}

function parse(text: string): PendingPairing {
  try {
    return PendingSchema.parse(JSON.parse(text));
  } catch (cause) {
    throw new GatewayError("INTERNAL", "malformed pending pairing request in the store", { cause });
  }
}
