/**
 * The files people share with a Slack bot, fetched for the agent: a file's `url_private` needs
 * the bot token (https://api.slack.com/types/file#auth). The token goes only to Slack's own hosts
 * (slack.com and its subdomains, where files.slack.com serves them) or the API's configured
 * origin, through the account's SSRF-guarded client; a URL anywhere else is refused.
 */
import { ChannelError, type FetchedFile, type InboundAttachment, type InboundFiles } from "@gw/channels";
import { fetchFile } from "../inbound-files.js";
import type { SlackApi } from "./api.js";

export class SlackFiles implements InboundFiles {
  private readonly apiOrigin: string;

  constructor(
    private readonly api: SlackApi,
    private readonly settings: { apiBaseUrl: string; botToken: string },
  ) {
    this.apiOrigin = new URL(settings.apiBaseUrl).origin;
  }

  async fetch(attachment: InboundAttachment, opts: { maxBytes: number; signal: AbortSignal }): Promise<FetchedFile> {
    if (attachment.url === undefined || !this.isSlacks(attachment.url)) throw new ChannelError("rejected", "a Slack file without a URL on Slack's hosts");
    return fetchFile(this.api.http, attachment.url, { ...opts, headers: { authorization: `Bearer ${this.settings.botToken}` } });
  }

  private isSlacks(url: string): boolean {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return false;
    }
    if (parsed.origin === this.apiOrigin) return true;
    return parsed.protocol === "https:" && (parsed.hostname === "slack.com" || parsed.hostname.endsWith(".slack.com"));
  }
}
