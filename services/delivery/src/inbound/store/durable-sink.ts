import type { InboundMessage } from "@gw/channels";
import type { Logger } from "@gw/runtime";
import type { ChannelDirectory } from "../../channel-directory.js";
import type { StatusBook } from "../../status-book.js";
import type { AnsweredEvents } from "./answered-events.js";
import { eventKeyOf, sessionKeyOf } from "./conversation.js";
import type { InboundStore } from "./inbound-store.js";
import type { InboundOrigin, InboundSink } from "./sink.js";

/** Longest platform event id kept: ids name runs and idempotency keys. */
const MAX_EVENT_ID = 200;

/**
 * The InboundSink (sink.ts) of this service: messages go into the durable inbound store,
 * grouped by session and deduplicated by eventId (against the session's waiting messages and
 * the events answered within the idempotency window), and `accept` resolves only once they are
 * stored. Then the processor is told, and the session's turn starts on this replica unless
 * another already works it; a turn running meanwhile is steered or interrupted by the queue
 * mode (QueueArrivals) before `accept` resolves.
 */
export class DurableInboundSink implements InboundSink {
  constructor(
    private readonly deps: {
      store: InboundStore;
      answered: AnsweredEvents;
      directory: ChannelDirectory;
      status: StatusBook;
      logger: Logger;
      /** Starts working a session's queue (InboundProcessor.kick). */
      kick: (queueKey: string) => void;
      /** What new messages do to the session's running turn (QueueArrivals.arrived); never rejects. */
      arrived?: (queueKey: string, origin: InboundOrigin, latest: InboundMessage) => Promise<void>;
    },
  ) {}

  async accept(origin: InboundOrigin, messages: readonly InboundMessage[]): Promise<void> {
    const defaultAccount = this.deps.directory.account(origin.channelId)?.accountId ?? origin.accountId;
    const sessions = new Map<string, InboundMessage[]>();
    for (const message of messages) {
      if (message.eventId === "" || message.eventId.length > MAX_EVENT_ID || message.chat === "") {
        this.deps.logger.warn({ channel: origin.channelId, eventId: message.eventId.slice(0, 64) }, "an inbound message without a usable id or chat is dropped");
        continue;
      }
      const key = sessionKeyOf(origin, message, defaultAccount);
      sessions.set(key, [...(sessions.get(key) ?? []), message]);
    }
    this.deps.status.inbound(origin.channelId, origin.accountId);
    for (const [sessionKey, batch] of sessions) {
      const answered = await this.deps.answered.which(batch.map((m) => eventKeyOf(origin, m.eventId)));
      const skip = new Set(batch.filter((m) => answered.has(eventKeyOf(origin, m.eventId))).map((m) => m.eventId));
      const { key, added } = await this.deps.store.append(origin, sessionKey, batch, skip);
      if (added === 0) continue;
      this.deps.kick(key);
      await this.deps.arrived?.(key, origin, batch.at(-1)!);
    }
  }
}
