/**
 * BlueBubbles server webhook events as the server posts them (Settings > API & Webhooks):
 * `{ type: "new-message", data: <Message> }`, the Message with its guid, text, sender handle and
 * chats. BlueBubbles adds no signature; the gateway's webhook URL carries the password.
 */
import { randomUUID } from "node:crypto";

export interface BlueBubblesMessageInput {
  /** The chat GUID: `iMessage;-;+15551234567` (direct) or `iMessage;+;chat123` (group). */
  chatGuid: string;
  /** The sender's address (phone number or e-mail); absent on the Mac's own messages. */
  from?: string;
  text: string;
  isFromMe?: boolean;
  guid?: string;
  /** Files sent with it (a guid the fake server keeps: `keepFile`). */
  attachments?: Array<{ guid: string; transferName: string; mimeType: string; totalBytes: number }>;
}

export function blueBubblesNewMessage(input: BlueBubblesMessageInput): Record<string, unknown> {
  const now = Date.now();
  return {
    type: "new-message",
    data: {
      originalROWID: Math.floor(Math.random() * 100_000),
      guid: input.guid ?? randomUUID().toUpperCase(),
      text: input.text,
      attributedBody: null,
      handle: input.from === undefined ? null : { originalROWID: 7, address: input.from, service: "iMessage", country: "us", uncanonicalizedId: null },
      handleId: input.from === undefined ? 0 : 7,
      otherHandle: 0,
      attachments: input.attachments ?? [],
      subject: null,
      error: 0,
      dateCreated: now,
      dateRead: null,
      dateDelivered: null,
      isFromMe: input.isFromMe ?? input.from === undefined,
      isDelivered: true,
      hasAttachments: (input.attachments ?? []).length > 0,
      threadOriginatorGuid: null,
      chats: [{ originalROWID: 3, guid: input.chatGuid, style: input.chatGuid.includes(";+;") ? 43 : 45, chatIdentifier: input.chatGuid.split(";").at(-1), isArchived: false, displayName: "" }],
    },
  };
}

export function blueBubblesTypingEvent(chatGuid: string): Record<string, unknown> {
  return { type: "typing-indicator", data: { display: true, guid: chatGuid } };
}
