import type { InboundMessage } from "@gw/channels";

/** A direct message from person 42 to the bot, with the fields a test changes. */
export function inboundMessage(eventId: string, over: Partial<InboundMessage> = {}): InboundMessage {
  return { eventId, chat: "42", sender: "42", chatType: "direct", mentioned: false, fromBot: false, text: `message ${eventId}`, sentAt: 0, ...over };
}
