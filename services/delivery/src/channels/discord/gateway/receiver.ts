/**
 * Discord's inbound side: the Gateway, one connection per bot across replicas (delivery's
 * lease). The cursor is the session (id, last `s`, resume URL): a restart, or the replica that
 * takes over, RESUMEs it and Discord replays what came after the stored `s`; only when Discord
 * refuses (INVALID_SESSION) does it IDENTIFY anew, and messages sent while no session was alive
 * are then not replayed (a Gateway has no history). Reconnects back off with full jitter; after
 * several failed connections in a row the failure goes to delivery, which records it for
 * channels.status and tries again later.
 */
import { ChannelError, type ChannelReceiver, type InboundMessage, type ReceivedBatch } from "@gw/channels";
import { retryDelay, sleep } from "@gw/runtime";
import { z } from "zod";
import { type ConnectionEnd, GatewayConnection, type GatewayEvent, type SessionState } from "./connection.js";
import { inboundOf, relevantMessage } from "./message-create.js";
import { INTENTS } from "./protocol.js";

/** What the receiver asks of the REST API: the bot's own id, and where a channel sits. */
export interface DiscordLookups {
  me(signal: AbortSignal): Promise<{ id: string }>;
  channel(id: string, signal: AbortSignal): Promise<{ type: number; parent_id?: string | null }>;
}

export interface GatewayReceiverOptions {
  gatewayUrl: string;
  token: string;
  helloTimeoutMs?: number;
  /** Connections that fail in a row (none reached READY/RESUMED) before delivery is told. */
  maxFailedConnects?: number;
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  random?: () => number;
}

const CursorSchema = z.object({ sessionId: z.string().min(1), seq: z.number().int().nonnegative(), resumeUrl: z.string().min(1) });
/** Thread channel types: announcement, public and private threads. */
const THREAD_TYPES = new Set([10, 11, 12]);
/** Store the session's `s` at least this often even when no message for the bot came. */
const STORE_EVERY_EVENTS = 100;
const PLACE_CACHE_SIZE = 1_000;

export class DiscordGatewayReceiver implements ChannelReceiver {
  private readonly places = new Map<string, string | undefined>();

  constructor(
    private readonly opts: GatewayReceiverOptions,
    private readonly lookups: DiscordLookups,
  ) {}

  async *receive(cursor: string | undefined, signal: AbortSignal): AsyncGenerator<ReceivedBatch> {
    const random = this.opts.random ?? Math.random;
    const self = await this.lookups.me(signal);
    let session = parseCursor(cursor);
    let failures = 0;
    while (!signal.aborted) {
      const connection = new GatewayConnection({
        url: this.opts.gatewayUrl,
        token: this.opts.token,
        intents: INTENTS,
        session,
        signal,
        helloTimeoutMs: this.opts.helloTimeoutMs ?? 20_000,
        random,
      });
      let storedSeq = session?.seq ?? 0;
      let end: ConnectionEnd | undefined;
      while (end === undefined) {
        const next = await connection.next();
        if (!Array.isArray(next)) {
          end = next;
          break;
        }
        const read = await this.read(next, session, self.id, signal);
        session = read.session;
        if (read.established) failures = 0;
        if (session !== undefined && (read.messages.length > 0 || read.newSession || session.seq - storedSeq >= STORE_EVERY_EVENTS)) {
          storedSeq = session.seq;
          yield { messages: read.messages, cursor: JSON.stringify(session) };
        }
      }
      if (signal.aborted) return;
      if (end.next === "fatal") throw new ChannelError("rejected", end.reason);
      if (end.next === "identify") session = undefined;
      if (!end.established) failures += 1;
      const max = this.opts.maxFailedConnects ?? 5;
      if (failures >= max) throw new ChannelError("unavailable", `Discord gateway: ${end.reason} (${failures} connections failed in a row)`);
      const backoff = { baseMs: this.opts.backoffBaseMs ?? 1_000, capMs: this.opts.backoffMaxMs ?? 60_000, jitter: "full" as const, random };
      await sleep(end.waitMs ?? retryDelay(failures, backoff), signal).catch(() => undefined);
    }
  }

  /** One buffer of events: the session moved along, and the messages for the bot in them. */
  private async read(events: GatewayEvent[], from: SessionState | undefined, selfId: string, signal: AbortSignal) {
    let session = from;
    let newSession = false;
    let established = false;
    const messages: InboundMessage[] = [];
    for (const event of events) {
      if (event.kind === "ready") {
        session = event.session;
        newSession = true;
        established = true;
        continue;
      }
      if (event.kind === "resumed") established = true;
      if (session !== undefined) session = { ...session, seq: event.s };
      if (event.kind !== "dispatch" || event.t !== "MESSAGE_CREATE") continue;
      const message = relevantMessage(event.d, selfId);
      if (message === undefined) continue;
      const parentId = message.guild_id === undefined ? undefined : await this.parentOf(message.channel_id, signal);
      messages.push(inboundOf(message, selfId, { parentId }));
    }
    return { session, newSession, established, messages };
  }

  /** A thread's parent channel (cached); undefined for a plain channel, or when Discord cannot say. */
  private async parentOf(channelId: string, signal: AbortSignal): Promise<string | undefined> {
    if (this.places.has(channelId)) return this.places.get(channelId);
    let parent: string | undefined;
    try {
      const channel = await this.lookups.channel(channelId, signal);
      parent = THREAD_TYPES.has(channel.type) ? (channel.parent_id ?? undefined) : undefined;
    } catch {
      // Answered in the channel itself: a thread id posts into the thread all the same.
      return undefined;
    }
    if (this.places.size >= PLACE_CACHE_SIZE) this.places.delete(this.places.keys().next().value!);
    this.places.set(channelId, parent);
    return parent;
  }
}

function parseCursor(cursor: string | undefined): SessionState | undefined {
  if (cursor === undefined) return undefined;
  try {
    const parsed = CursorSchema.safeParse(JSON.parse(cursor));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
