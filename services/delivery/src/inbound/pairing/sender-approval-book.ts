import { createHash, randomInt } from "node:crypto";
import type { InboundMessage } from "@gw/channels";
import { decodeJson, GatewayError, isGatewayError } from "@gw/contracts";
import type { DurableKv } from "@gw/store";
import { z } from "zod";
import { normaliseSender } from "../../sender-policy.js";
import type { InboundOrigin } from "../store/sink.js";

const PairingEntrySchema = z.object({
  channel: z.string(),
  accountId: z.string(),
  sender: z.string(),
  senderName: z.string(),
  /** Where the code went, so the approval notice goes there too. */
  chat: z.string(),
  threadId: z.string().optional(),
  code: z.string(),
  requestedAt: z.number(),
  expiresAt: z.number(),
  /** When the code was last sent: a sender who keeps writing gets it again at most once a minute. */
  notifiedAt: z.number(),
});
export type PairingEntry = z.output<typeof PairingEntrySchema>;

const ApprovedSchema = z.object({ channel: z.string(), accountId: z.string(), sender: z.string(), approvedAt: z.number() });

/** Letters and digits that cannot be mistaken for one another (no 0/O, 1/I/L). */
const ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";
const RENOTIFY_MS = 60_000;

/** `ABCD-EFGH`: 31^8 (about 8.5e11) codes, typed by a person to an operator. */
function newCode(): string {
  const chars = Array.from({ length: 8 }, () => ALPHABET[randomInt(ALPHABET.length)]!);
  return `${chars.slice(0, 4).join("")}-${chars.slice(4).join("")}`;
}

/** How operators may type a code: any case, with or without the dash or spaces. */
function canonicalCode(code: string): string {
  return code.toUpperCase().replace(/[^A-Z0-9]/g, "");
}

function senderKey(prefix: string, channel: string, accountId: string, sender: string): string {
  const digest = createHash("sha256").update(`${channel}\n${accountId}\n${normaliseSender(sender)}`).digest("base64url");
  return `${prefix}_${digest.slice(0, 32)}`;
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value), "utf8");

/**
 * Pairing of unknown senders (dmPolicy "pairing"), durable in the DurableStore: a sender who
 * writes to a bot without being on `allowFrom` gets a short code, an operator approves the code
 * (`channels.pairing.approve`), and the sender is answered from then on, on every replica and
 * after restarts. One pending code per sender and account; it lapses after `ttlMs` and a new
 * one is issued when the sender writes again. Approvals are kept until removed from the store.
 */
export class PairingBook {
  /** Approvals seen by this replica: they are never withdrawn, so a hit needs no store read. */
  private readonly approvedSeen = new Set<string>();

  constructor(
    private readonly deps: {
      requests: DurableKv;
      approved: DurableKv;
      ttlMs: number;
    },
  ) {}

  async isApproved(origin: InboundOrigin, sender: string): Promise<boolean> {
    const key = senderKey("a", origin.channelId, origin.accountId, sender);
    if (this.approvedSeen.has(key)) return true;
    const found = (await this.deps.approved.get(key)) !== null;
    if (found) this.approvedSeen.add(key);
    return found;
  }

  /**
   * The sender's pending code (a new one when there is none or it lapsed), and whether it should
   * be sent now (not within a minute of the last time).
   */
  async request(origin: InboundOrigin, msg: InboundMessage): Promise<{ entry: PairingEntry; notify: boolean }> {
    const key = senderKey("p", origin.channelId, origin.accountId, msg.sender);
    for (let round = 0; round < 20; round++) {
      const now = Date.now();
      const current = await this.deps.requests.get(key);
      const held = current === null ? undefined : decodeJson(current.value, PairingEntrySchema, "pairing request");
      const live = held !== undefined && held.expiresAt > now ? held : undefined;
      const notify = live === undefined || now - live.notifiedAt >= RENOTIFY_MS;
      if (live !== undefined && !notify) return { entry: live, notify: false };
      const entry: PairingEntry = live
        ? { ...live, chat: msg.chat, notifiedAt: now }
        : {
            channel: origin.channelId,
            accountId: origin.accountId,
            sender: msg.sender,
            senderName: msg.senderName ?? msg.sender,
            chat: msg.chat,
            ...(msg.threadId === undefined ? {} : { threadId: msg.threadId }),
            code: newCode(),
            requestedAt: now,
            expiresAt: now + this.deps.ttlMs,
            notifiedAt: now,
          };
      try {
        if (current === null) await this.deps.requests.create(key, json(entry));
        else await this.deps.requests.update(key, json(entry), current.revision);
        return { entry, notify: true };
      } catch (err) {
        if (!(isGatewayError(err) && err.code === "CONFLICT")) throw err;
      }
    }
    throw new GatewayError("UNAVAILABLE", "the pairing request kept changing under us");
  }

  /** Pending, unexpired requests, oldest first; lapsed ones are removed on the way. */
  async list(channel?: string): Promise<PairingEntry[]> {
    const entries: PairingEntry[] = [];
    for (const key of await this.deps.requests.keys()) {
      const current = await this.deps.requests.get(key);
      if (current === null) continue;
      const entry = decodeJson(current.value, PairingEntrySchema, "pairing request");
      if (entry.expiresAt <= Date.now()) {
        await this.deps.requests.delete(key, current.revision).catch(() => undefined);
        continue;
      }
      if (channel === undefined || entry.channel === channel) entries.push(entry);
    }
    return entries.sort((a, b) => a.requestedAt - b.requestedAt);
  }

  /** Approves the sender a code was sent to; NOT_FOUND for an unknown or lapsed code. */
  async approve(channel: string, code: string, accountId?: string): Promise<PairingEntry> {
    const entry = await this.pending(channel, code, accountId);
    const approvedKey = senderKey("a", entry.channel, entry.accountId, entry.sender);
    await this.deps.approved.put(
      approvedKey,
      json(ApprovedSchema.parse({ channel: entry.channel, accountId: entry.accountId, sender: entry.sender, approvedAt: Date.now() })),
    );
    this.approvedSeen.add(approvedKey);
    await this.deps.requests.delete(senderKey("p", entry.channel, entry.accountId, entry.sender));
    return entry;
  }

  /**
   * Drops the request a code was sent to without approving the sender; NOT_FOUND as approve.
   * The sender stays unknown: writing again later brings a new code (and a new request).
   */
  async reject(channel: string, code: string, accountId?: string): Promise<PairingEntry> {
    const entry = await this.pending(channel, code, accountId);
    await this.deps.requests.delete(senderKey("p", entry.channel, entry.accountId, entry.sender));
    return entry;
  }

  /** The pending request a code names (any case, with or without the dash). */
  private async pending(channel: string, code: string, accountId?: string): Promise<PairingEntry> {
    const wanted = canonicalCode(code);
    const entry = (await this.list(channel)).find(
      (e) => canonicalCode(e.code) === wanted && (accountId === undefined || e.accountId === accountId),
    );
    if (entry === undefined) throw new GatewayError("NOT_FOUND", `no pending pairing request on channel "${channel}" has code ${code}`);
    return entry;
  }
}
