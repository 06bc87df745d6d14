/**
 * The files people send a Telegram bot, fetched for the agent: `getFile` names the file's path,
 * then `<apiBaseUrl>/file/bot<token>/<file_path>` serves it (https://core.telegram.org/bots/api#getfile),
 * through the account's own client (its base is the API's origin, so the token never leaves it
 * and is scrubbed from errors). The Bot API serves files of up to 20 MB.
 */
import type { FetchedFile, InboundAttachment, InboundFiles } from "@gw/channels";
import { ChannelError } from "@gw/channels";
import { z } from "zod";
import { fetchFile } from "../inbound-files.js";
import type { TelegramApi } from "./api.js";

const FileSchema = z.object({ file_id: z.string(), file_size: z.number().int().optional(), file_path: z.string().optional() });

export class TelegramFiles implements InboundFiles {
  constructor(
    private readonly api: TelegramApi,
    private readonly settings: { apiBaseUrl: string; botToken: string },
  ) {}

  async fetch(attachment: InboundAttachment, opts: { maxBytes: number; signal: AbortSignal }): Promise<FetchedFile> {
    if (attachment.id === undefined) throw new ChannelError("rejected", "a Telegram file without a file_id");
    const file = await this.api.call("getFile", { file_id: attachment.id }, FileSchema, opts.signal);
    if (file.file_size !== undefined && file.file_size > opts.maxBytes) return { kind: "too_large" };
    if (file.file_path === undefined) throw new ChannelError("rejected", "Telegram gave no file_path for the file (over 20 MB?)");
    const url = `${this.settings.apiBaseUrl.replace(/\/+$/, "")}/file/bot${this.settings.botToken}/${file.file_path}`;
    return fetchFile(this.api.http, url, opts);
  }
}
