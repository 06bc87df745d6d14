/**
 * A signal-cli envelope (`signal-cli --output json receive`, as the bridge relays it) as an
 * InboundMessage. Only data messages with text or attachments count; receipts, typing and sync messages (the
 * account's own, sent from a linked phone) are dropped. Signal has no bots and no threads.
 */
import type { InboundMessage } from "@gw/channels";
import { z } from "zod";
import { inboundAttachment } from "../inbound-attachment.js";

const EnvelopeSchema = z.object({
  envelope: z.object({
    source: z.string().nullish(),
    sourceNumber: z.string().nullish(),
    sourceUuid: z.string().nullish(),
    sourceName: z.string().nullish(),
    timestamp: z.number().int(),
    dataMessage: z
      .object({
        message: z.string().nullish(),
        groupInfo: z.object({ groupId: z.string().min(1) }).nullish(),
        mentions: z.array(z.object({ number: z.string().nullish(), start: z.number().int(), length: z.number().int() })).nullish(),
        quote: z.object({ author: z.string().nullish(), authorNumber: z.string().nullish() }).nullish(),
        attachments: z
          .array(z.object({ id: z.string(), contentType: z.string().nullish(), filename: z.string().nullish(), size: z.number().int().nullish() }))
          .nullish(),
      })
      .nullish(),
  }),
});

/** The message in one envelope, for the bridge account `account`; undefined when there is none. */
export function messageOfEnvelope(raw: unknown, account: string): InboundMessage | undefined {
  const parsed = EnvelopeSchema.safeParse(raw);
  if (!parsed.success) return undefined;
  const { envelope } = parsed.data;
  const data = envelope.dataMessage;
  const sender = envelope.sourceNumber ?? envelope.sourceUuid?.toLowerCase() ?? envelope.source ?? undefined;
  if (data === null || data === undefined || sender === undefined || sender === account) return undefined;
  const ours = (data.mentions ?? []).filter((m) => m.number === account);
  const text = withoutMentions(data.message ?? "", ours);
  // The bridge keeps each received file under its id (`GET /v1/attachments/{id}` on the bridge).
  const attachments = (data.attachments ?? []).map((a) => inboundAttachment({ name: a.filename, mimeType: a.contentType, size: a.size, id: a.id }));
  if (text === "" && attachments.length === 0) return undefined;
  // The bridge names a group `group.<base64 of signal-cli's base64 id>`, as `send` takes it.
  const group = data.groupInfo?.groupId;
  const quoted = data.quote?.authorNumber ?? data.quote?.author;
  return {
    eventId: `${envelope.timestamp}:${sender}`,
    chat: group === undefined ? sender : `group.${Buffer.from(group, "utf8").toString("base64")}`,
    sender,
    ...(envelope.sourceName ? { senderName: envelope.sourceName } : {}),
    chatType: group === undefined ? "direct" : "group",
    mentioned: ours.length > 0 || quoted === account,
    fromBot: false,
    text,
    ...(attachments.length > 0 ? { attachments } : {}),
    sentAt: envelope.timestamp,
  };
}

/** Signal puts U+FFFC where a mention sits; the account's own are removed (right to left). */
function withoutMentions(text: string, ours: ReadonlyArray<{ start: number; length: number }>): string {
  let out = text;
  for (const m of [...ours].sort((a, b) => b.start - a.start)) out = out.slice(0, m.start) + out.slice(m.start + m.length);
  return out.trim();
}
