/**
 * Signal through signal-cli-rest-api, a bridge the user runs next to a registered or linked
 * Signal account (`number`). Media is downloaded here (SSRF-guarded, at most
 * `delivery.media.maxBytes` each) and sent as base64 data URIs, since the bridge takes bytes,
 * not links.
 */
import {
  type ChannelAdapter,
  ChannelError,
  type ChannelProbe,
  type ChannelReceiver,
  type DeliveryReceipt,
  type OutboundMessage,
  type OutboundPoll,
  receiptOf,
  type SignalSettings,
} from "@gw/channels";
import type { HttpClient } from "@gw/http-client";
import { bridgeEndpoint } from "../bridge/bridge-url.js";
import { fetchMedia } from "../bridge/bridge-media.js";
import { DEFAULT_MEDIA_LIMITS, definePlugin, type HttpClientFactory, type MediaLimits } from "../registry.js";
import { type SendBody, SignalApi } from "./api.js";
import { SignalReceiver } from "./receiver.js";
import { isSignalGroup, signalQuote, signalRecipient } from "./signal-address.js";

/**
 * Signal clients show a message body of up to 2 KiB of UTF-8 inline; signal-cli (0.11.5+) sends
 * longer text as a "long text" attachment, as the official apps do. 2000 code units keep Latin
 * text inline everywhere (linked devices and third-party clients included); denser scripts
 * still arrive whole, through that attachment.
 */
const TEXT_CHUNK = 2_000;
/**
 * Every attachment of one send is held in memory (base64) for one request body, so an album
 * is bounded at 10 x delivery.media.maxBytes; longer lists go out as several messages.
 */
const MEDIA_PER_MESSAGE = 10;
/** The bridge may take its time (signal-cli uploads attachments first); delivery's deadline rules. */
const CALL_TIMEOUT_MS = 60_000;

export const signalPlugin = definePlugin({
  kind: "signal",
  create: ({ settings, http, media }) => new SignalAdapter(settings, http, media ?? DEFAULT_MEDIA_LIMITS),
});

class SignalAdapter implements ChannelAdapter {
  readonly limits = { textChunk: TEXT_CHUNK, polls: true, mediaPerMessage: MEDIA_PER_MESSAGE };
  private readonly client: HttpClient;
  private readonly api: SignalApi;
  /** The bridge's receive endpoint, unless the account's `inbound` is "off". */
  readonly receiver?: ChannelReceiver;

  constructor(
    private readonly settings: SignalSettings,
    http: HttpClientFactory,
    private readonly media: MediaLimits,
  ) {
    const endpoint = bridgeEndpoint(settings.bridgeUrl);
    this.client = http({
      name: "signal-cli-rest-api",
      baseUrl: endpoint.baseUrl,
      headers: endpoint.headers,
      secrets: endpoint.secrets,
      timeoutMs: CALL_TIMEOUT_MS,
    });
    this.api = new SignalApi(this.client);
    if (settings.inbound === "receive") this.receiver = new SignalReceiver(this.api, settings.number);
  }

  /** Signal's typing indicator shows until the next message or about 15 s pass. */
  async typing(chat: string, _threadId: string | undefined, signal: AbortSignal): Promise<void> {
    await this.api.typing(this.settings.number, signalRecipient(chat), true, signal);
  }

  /** Hidden at once: a turn that ends without an answer (or with one) leaves no indicator behind. */
  async stopTyping(chat: string, _threadId: string | undefined, signal: AbortSignal): Promise<void> {
    await this.api.typing(this.settings.number, signalRecipient(chat), false, signal);
  }

  validateRecipient(to: string): string {
    return signalRecipient(to);
  }

  async send(msg: OutboundMessage, signal: AbortSignal): Promise<DeliveryReceipt> {
    const to = signalRecipient(msg.to);
    const quote = msg.threadId === undefined ? undefined : signalQuote(msg.threadId, to);
    const attachments: string[] = [];
    for (const [i, url] of msg.mediaUrls.entries()) {
      const file = await fetchMedia(this.client, url, i + 1, this.media, signal);
      attachments.push(`data:${file.contentType};filename=${file.filename};base64,${file.bytes.toString("base64")}`);
    }
    const text = msg.text ?? "";
    if (text === "" && attachments.length === 0) throw new ChannelError("rejected", "nothing to send: no text and no media");
    const body: SendBody = {
      number: this.settings.number,
      recipients: [to],
      message: text,
      ...(attachments.length === 0 ? {} : { base64_attachments: attachments }),
      ...(quote === undefined ? {} : { quote_timestamp: quote.timestamp, quote_author: quote.author }),
    };
    return receiptOf([await this.api.send(body, !isSignalGroup(to), signal)]);
  }

  async sendPoll(poll: OutboundPoll, signal: AbortSignal): Promise<DeliveryReceipt> {
    const to = signalRecipient(poll.to);
    if (poll.anonymous) throw new ChannelError("unsupported", "Signal polls always show who voted, so an anonymous poll cannot be sent");
    if (poll.threadId !== undefined) throw new ChannelError("unsupported", "a Signal poll cannot quote a message (threadId)");
    const body = { recipient: to, question: poll.question, answers: poll.options, allow_multiple_selections: poll.allowMultipleAnswers };
    return receiptOf([await this.api.createPoll(this.settings.number, body, signal)]);
  }

  /** The bridge answers /v1/about, and the configured number is one of its accounts. */
  async status(signal: AbortSignal): Promise<ChannelProbe> {
    const identity = this.settings.number;
    try {
      await this.api.about(signal);
      const accounts = await this.api.accounts(signal);
      if (!accounts.includes(identity)) return { reachable: false, identity, error: `${identity} is not an account of this signal-cli-rest-api` };
      return { reachable: true, identity };
    } catch (err) {
      return { reachable: false, identity, error: err instanceof Error ? err.message : String(err) };
    }
  }
}
