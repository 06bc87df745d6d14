import { createHash } from "node:crypto";
import type { InboundMessage } from "@gw/channels";
import { decodeJson, GatewayError, isGatewayError } from "@gw/contracts";
import type { DurableKv } from "@gw/store";
import { z } from "zod";
import type { InboundOrigin } from "./sink.js";

const MessageSchema = z.object({
  eventId: z.string(),
  chat: z.string(),
  threadId: z.string().optional(),
  sender: z.string(),
  senderName: z.string().optional(),
  chatType: z.enum(["direct", "group"]),
  mentioned: z.boolean(),
  fromBot: z.boolean(),
  text: z.string(),
  attachments: z
    .array(
      z.object({
        kind: z.string(),
        name: z.string().optional(),
        mimeType: z.string().optional(),
        size: z.number().optional(),
        url: z.string().optional(),
        id: z.string().optional(),
      }),
    )
    .optional(),
  sentAt: z.number(),
});

const QueuedSchema = z.object({
  message: MessageSchema,
  receivedAt: z.number(),
  /** The run id of the turn that answers it, from before that run starts (pending-queue.ts). */
  turn: z.string().optional(),
  /** The run id of the running turn it was handed to (steer), until that run is over. */
  steer: z.string().optional(),
  /** Turns of it that were interrupted. */
  tries: z.number().optional(),
});

const SessionQueueSchema = z.object({
  channelId: z.string(),
  accountId: z.string(),
  sessionKey: z.string(),
  items: z.array(QueuedSchema),
  /** The run id of a turn being aborted for newer messages (interrupt). */
  interrupt: z.string().optional(),
});

export type QueuedMessage = z.output<typeof QueuedSchema>;
export type SessionQueue = z.output<typeof SessionQueueSchema>;

/** A session's queue as read, with the revision a change must be made against. */
export interface QueueRead {
  key: string;
  queue: SessionQueue;
  revision: number;
}

/** Compare-and-set rounds before a write gives up (each lost round means another writer won). */
const MAX_ROUNDS = 50;

const encode = (queue: SessionQueue) => Buffer.from(JSON.stringify(queue), "utf8");
/** A writer that lost a compare-and-set waits a moment, so writers in lockstep fall out of it. */
const jitter = () => new Promise((resolve) => setTimeout(resolve, Math.random() * 5));

/**
 * The durable inbound store: one record per session holding its messages in arrival order,
 * in the DurableStore (JetStream KV in distributed mode, files in embedded mode). A message is
 * added before the platform is answered, taken off only once it has been answered, and every
 * change is a compare-and-set on the record's revision, so replicas appending and processing
 * the same session never lose one another's writes. A record leaves the store when its last
 * message does (a delete at the revision read: a message appended meanwhile keeps it).
 */
export class InboundStore {
  constructor(
    private readonly kv: DurableKv,
    private readonly opts: { maxPerSession: number },
  ) {}

  static queueKey(origin: InboundOrigin, sessionKey: string): string {
    const digest = createHash("sha256").update(`${origin.channelId}\n${origin.accountId}\n${sessionKey}`).digest("base64url");
    return `q_${digest.slice(0, 32)}`;
  }

  /**
   * Appends the messages whose eventId the session does not hold yet (a platform's retry, a
   * receiver's re-read) and answers how many were new. `skip` names events already answered.
   * UNAVAILABLE when the session already holds `maxPerSession` messages: the platform should
   * send them again later rather than have the gateway hold an unbounded backlog.
   */
  async append(origin: InboundOrigin, sessionKey: string, messages: readonly InboundMessage[], skip: ReadonlySet<string>): Promise<{ key: string; added: number }> {
    const key = InboundStore.queueKey(origin, sessionKey);
    // Most sessions have nothing waiting (their record is gone): try to create it before reading.
    let read: QueueRead | null = null;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      if (round > 1) await jitter();
      if (round > 0) read = await this.read(key);
      const queue: SessionQueue = read?.queue ?? { channelId: origin.channelId, accountId: origin.accountId, sessionKey, items: [] };
      const held = new Set(queue.items.map((item) => item.message.eventId));
      const fresh: QueuedMessage[] = [];
      for (const message of messages) {
        if (held.has(message.eventId) || skip.has(message.eventId)) continue;
        held.add(message.eventId);
        fresh.push({ message: { ...message }, receivedAt: Date.now() });
      }
      if (fresh.length === 0) return { key, added: 0 };
      if (queue.items.length + fresh.length > this.opts.maxPerSession) {
        throw new GatewayError("UNAVAILABLE", `session ${sessionKey} already has ${queue.items.length} messages waiting`);
      }
      const next = { ...queue, items: [...queue.items, ...fresh] };
      if (await this.write(key, next, read?.revision)) return { key, added: fresh.length };
    }
    throw new GatewayError("UNAVAILABLE", `too many concurrent writers on the inbound queue of ${sessionKey}`);
  }

  async read(key: string): Promise<QueueRead | null> {
    const entry = await this.kv.get(key);
    if (entry === null) return null;
    return { key, queue: decodeJson(entry.value, SessionQueueSchema, "inbound queue record"), revision: entry.revision };
  }

  /**
   * Takes one message off its session's queue (the record goes when it was the last). `seen`, the
   * record as the caller read it, saves a read when nothing was appended since.
   */
  async remove(key: string, eventId: string, seen?: QueueRead): Promise<void> {
    const without = (queue: SessionQueue) => {
      const items = queue.items.filter((item) => item.message.eventId !== eventId);
      return items.length === queue.items.length ? undefined : { ...queue, items };
    };
    if (seen !== undefined) {
      const next = without(seen.queue);
      if (next === undefined || (await this.write(key, next, seen.revision))) return;
    }
    await this.change(key, without);
  }

  /**
   * Writes `next` in place of the record as `seen`; null when the record changed meanwhile (read
   * it again and decide again).
   */
  async replace(seen: QueueRead, next: SessionQueue): Promise<QueueRead | null> {
    try {
      const revision = await this.kv.update(seen.key, encode(next), seen.revision);
      return { key: seen.key, queue: next, revision };
    } catch (err) {
      if (isGatewayError(err) && err.code === "CONFLICT") return null;
      throw err;
    }
  }

  /** Every session with messages waiting (and, briefly, ones just emptied). */
  keys(): Promise<string[]> {
    return this.kv.keys();
  }

  /**
   * Applies `change` to the record, read again for as long as another writer gets there first;
   * answers the record written, undefined when there was no record or nothing to change.
   */
  async change(key: string, change: (queue: SessionQueue) => SessionQueue | undefined): Promise<SessionQueue | undefined> {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      if (round > 0) await jitter();
      const read = await this.read(key);
      if (read === null) return undefined;
      const next = change(read.queue);
      if (next === undefined) return undefined;
      if (await this.write(key, next, read.revision)) return next;
    }
    throw new GatewayError("UNAVAILABLE", `too many concurrent writers on inbound queue ${key}`);
  }

  /** One compare-and-set write (a create without a revision); false when another writer got there first. */
  private async write(key: string, queue: SessionQueue, revision: number | undefined): Promise<boolean> {
    try {
      if (revision === undefined) await this.kv.create(key, encode(queue));
      else if (queue.items.length === 0) await this.kv.delete(key, revision);
      else await this.kv.update(key, encode(queue), revision);
      return true;
    } catch (err) {
      if (isGatewayError(err) && err.code === "CONFLICT") return false;
      throw err;
    }
  }
}
