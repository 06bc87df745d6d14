/**
 * The files of a Telegram message (https://core.telegram.org/bots/api#message) as attachments:
 * described by their `file_id`, never by URL, since a Telegram file URL carries the bot token.
 */
import type { InboundAttachment } from "@gw/channels";
import { z } from "zod";
import { inboundAttachment } from "../inbound-attachment.js";

const FileSchema = z.object({
  file_id: z.string(),
  file_name: z.string().optional(),
  mime_type: z.string().optional(),
  file_size: z.number().int().optional(),
});

/** The message fields that carry a file, by the attachment kind each is. */
export const TelegramFilesSchema = z.object({
  photo: z.array(FileSchema).optional(),
  document: FileSchema.optional(),
  video: FileSchema.optional(),
  animation: FileSchema.optional(),
  audio: FileSchema.optional(),
  voice: FileSchema.optional(),
  video_note: FileSchema.optional(),
  sticker: FileSchema.extend({ emoji: z.string().optional() }).optional(),
});

type TelegramFiles = z.output<typeof TelegramFilesSchema>;
type TelegramFile = z.output<typeof FileSchema>;

const KINDS: ReadonlyArray<[Exclude<keyof TelegramFiles, "photo">, string]> = [
  // An animation also comes as a document, for old clients: take it once, as the animation.
  ["animation", "animation"],
  ["document", "document"],
  ["video", "video"],
  ["audio", "audio"],
  ["voice", "voice"],
  ["video_note", "video"],
  ["sticker", "sticker"],
];

function described(kind: string, file: TelegramFile, mimeType?: string): InboundAttachment {
  return inboundAttachment({ kind, name: file.file_name, mimeType: file.mime_type ?? mimeType, size: file.file_size, id: file.file_id });
}

/** A photo is sent in several sizes: the largest (the last) stands for it. */
export function telegramAttachments(message: TelegramFiles): InboundAttachment[] {
  const out: InboundAttachment[] = [];
  const photo = message.photo?.at(-1);
  if (photo !== undefined) out.push(described("image", photo, "image/jpeg"));
  for (const [field, kind] of KINDS) {
    const file = message[field];
    if (file === undefined || (field === "document" && message.animation !== undefined)) continue;
    out.push(described(kind, file));
  }
  return out;
}
