/**
 * The files people send a WhatsApp number, fetched for the agent: the Cloud API names a media
 * id; `GET /<media id>` answers its URL, type and size
 * (https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media#retrieve-media-url),
 * and the URL needs the number's token too. The token goes only to the URL the Graph API named,
 * through the account's SSRF-guarded client.
 */
import { ChannelError, type FetchedFile, type InboundAttachment, type InboundFiles } from "@gw/channels";
import type { HttpClient } from "@gw/http-client";
import { z } from "zod";
import { channelErrorFromHttp } from "../http-channel-error.js";
import { fetchFile } from "../inbound-files.js";

const MediaSchema = z.object({ url: z.string(), mime_type: z.string().optional(), file_size: z.number().optional() });

export class WhatsAppFiles implements InboundFiles {
  constructor(
    private readonly http: HttpClient,
    private readonly accessToken: string,
  ) {}

  async fetch(attachment: InboundAttachment, opts: { maxBytes: number; signal: AbortSignal }): Promise<FetchedFile> {
    if (attachment.id === undefined || attachment.id === "") throw new ChannelError("rejected", "a WhatsApp file without a media id");
    let media: z.output<typeof MediaSchema>;
    try {
      media = (await this.http.requestJson({ path: encodeURIComponent(attachment.id), signal: opts.signal, parse: MediaSchema.parse })).data;
    } catch (err) {
      throw channelErrorFromHttp(err);
    }
    if (media.file_size !== undefined && media.file_size > opts.maxBytes) return { kind: "too_large" };
    return fetchFile(this.http, media.url, { ...opts, headers: { authorization: `Bearer ${this.accessToken}` } });
  }
}
