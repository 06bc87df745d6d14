import type { InboundMessage } from "@gw/channels";

/** Where one account's inbound messages are. */
export interface InboundOrigin {
  channelId: string;
  accountId: string;
}

/**
 * Where every inbound message goes first, whichever way it arrived (a forwarded webhook or a
 * receiver): `accept` resolves only once the messages are stored durably (JetStream in
 * distributed mode, files in embedded mode), deduplicated by `eventId`; only then may the
 * webhook be answered 200 or the receiver's cursor move on. Processing (policy, session, run,
 * answer) happens after, from the store.
 */
export interface InboundSink {
  accept(origin: InboundOrigin, messages: readonly InboundMessage[]): Promise<void>;
}
