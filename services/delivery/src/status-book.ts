import { readStoredJson } from "@gw/contracts";
import type { Logger } from "@gw/runtime";
import type { FastStore } from "@gw/store";
import { z } from "zod";

/** Which agent answered the last message of one chat (or thread), and which binding chose it. */
const RouteRecordSchema = z.object({
  chat: z.string(),
  /** "" outside threads. */
  threadId: z.string(),
  /** "" for agents.default. */
  agentId: z.string(),
  /** The index in `bindings`; -1 when the channel's own agent answered. */
  binding: z.number().int(),
  at: z.number(),
});
export type RouteRecord = z.infer<typeof RouteRecordSchema>;

/** The chats an account's status keeps, most recent first. */
const MAX_ROUTES = 20;

const AccountRecordSchema = z.object({
  lastSuccessAt: z.number(),
  lastError: z.string(),
  lastErrorAt: z.number(),
  rateLimitedUntil: z.number(),
  /** The last inbound request or batch the account took. */
  lastInboundAt: z.number(),
  /** The last inbound failure: a refused signature, a malformed payload, a turn that failed. */
  lastInboundError: z.string(),
  lastInboundErrorAt: z.number(),
  /** The last chats that got a turn, most recent first: one entry per chat and thread. */
  lastRoutes: z.array(RouteRecordSchema),
});
export type AccountRecord = z.infer<typeof AccountRecordSchema>;

/** Records written before a field existed lack it: the field reads as empty. */
const StoredAccountSchema = AccountRecordSchema.partial();

const EMPTY: AccountRecord = {
  lastSuccessAt: 0,
  lastError: "",
  lastErrorAt: 0,
  rateLimitedUntil: 0,
  lastInboundAt: 0,
  lastInboundError: "",
  lastInboundErrorAt: 0,
  lastRoutes: [],
};
/** Kept well past any probe cache: an account quiet for a week shows no stale "last error". */
const RECORD_TTL_MS = 7 * 24 * 3_600_000;
/** A replica writes an account's success at most this often (one store write per second, not per send). */
const SUCCESS_WRITE_EVERY_MS = 1_000;

/**
 * What `channels.status` reports beyond the probe (DESIGN §7): last success, last error and
 * rate-limit state per account, shared by every delivery replica through the FastStore.
 */
export class StatusBook {
  private readonly successWrittenAt = new Map<string, number>();
  /** Writes of one account, chained so a read-modify-write never loses another's field. */
  private readonly chains = new Map<string, Promise<void>>();

  constructor(
    private readonly store: FastStore,
    /** Says when a stored record does not decode (it then reads as empty and the next write replaces it). */
    private readonly logger?: Logger,
  ) {}

  private key(channelId: string, accountId: string): string {
    return `delivery:status:${channelId}:${accountId}`;
  }

  async read(channelId: string, accountId: string): Promise<AccountRecord> {
    const raw = await this.store.values.get(this.key(channelId, accountId));
    if (raw === null) return { ...EMPTY };
    const stored = readStoredJson(raw, StoredAccountSchema);
    if (stored.ok) return { ...EMPTY, ...stored.value };
    this.logger?.error({ channelId, accountId, problem: stored.problem }, "a corrupt account status record reads as empty");
    return { ...EMPTY };
  }

  success(channelId: string, accountId: string): void {
    if (this.throttled(`out:${channelId}:${accountId}`)) return;
    this.update(channelId, accountId, { lastSuccessAt: Date.now() });
  }

  /** The account took an inbound request or batch (written at most once a second per replica). */
  inbound(channelId: string, accountId: string): void {
    if (this.throttled(`in:${channelId}:${accountId}`)) return;
    this.update(channelId, accountId, { lastInboundAt: Date.now() });
  }

  inboundFailure(channelId: string, accountId: string, message: string): void {
    this.update(channelId, accountId, { lastInboundError: message.slice(0, 500), lastInboundErrorAt: Date.now() });
  }

  /** A message got a turn: its chat moves to the front of the account's routes. */
  routed(channelId: string, accountId: string, route: RouteRecord): void {
    const same = (r: RouteRecord) => r.chat === route.chat && r.threadId === route.threadId;
    this.update(channelId, accountId, (record) => ({
      lastRoutes: [route, ...(Array.isArray(record.lastRoutes) ? record.lastRoutes : []).filter((r) => !same(r))].slice(0, MAX_ROUTES),
    }));
  }

  private throttled(key: string): boolean {
    const now = Date.now();
    if (now - (this.successWrittenAt.get(key) ?? 0) < SUCCESS_WRITE_EVERY_MS) return true;
    this.successWrittenAt.set(key, now);
    return false;
  }

  failure(channelId: string, accountId: string, message: string): void {
    this.update(channelId, accountId, { lastError: message.slice(0, 500), lastErrorAt: Date.now() });
  }

  rateLimited(channelId: string, accountId: string, untilMs: number): void {
    this.update(channelId, accountId, { rateLimitedUntil: untilMs });
  }

  /** Best effort and off the send's path: status must never fail or slow a delivery. */
  private update(channelId: string, accountId: string, change: Partial<AccountRecord> | ((record: AccountRecord) => Partial<AccountRecord>)): void {
    const key = this.key(channelId, accountId);
    const previous = this.chains.get(key) ?? Promise.resolve();
    const next = previous
      .then(async () => {
        const current = await this.read(channelId, accountId);
        const record = { ...current, ...(typeof change === "function" ? change(current) : change) };
        await this.store.values.set(key, JSON.stringify(record), { ttlMs: RECORD_TTL_MS });
      })
      .catch(() => undefined);
    this.chains.set(key, next);
    // `next` cannot reject (caught above), so neither can this.
    void next.then(() => {
      if (this.chains.get(key) === next) this.chains.delete(key);
    }, () => undefined);
  }

  /** Resolves once every pending status write has been tried (for shutdown and tests). */
  async settled(): Promise<void> {
    await Promise.all([...this.chains.values()]);
  }
}
