/**
 * Signal through signal-cli-rest-api, a bridge the user runs next to a registered or linked
 * Signal account (`number`). Media is downloaded here (SSRF-guarded, at most
 * `delivery.media.maxBytes` each) and sent as base64 data URIs, since the bridge takes bytes,
 * not links.
 */
import {
  type ChannelAdapter,
  ChannelError,
  type ChannelInbound,
  type ChannelPolls,
  type ChannelProbe,
  type ChannelTyping,
  definePlugin,
  type DeliveryReceipt,
  type OutboundMessage,
  type OutboundPoll,
  PER_CHAT_PER_SECOND,
  receiptOf,
} from "@gw/channels";
import type { HttpClient } from "@gw/http-client";
import { bridgeEndpoint } from "../bridge/bridge-url.js";
import { fetchMedia } from "../bridge/bridge-media.js";
import { bridgeFiles } from "../inbound-files.js";
import { DEFAULT_MEDIA_LIMITS, type HttpClientFactory, type MediaLimits, type PluginContext } from "../registry.js";
import { type SendBody, SignalApi } from "./api.js";
import { SignalReceiver } from "./receiver.js";
import { isSignalGroup, signalQuote, signalRecipient } from "./signal-address.js";
import { type SignalSettings, SignalSettingsSchema } from "./settings.js";

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

/**
 * signal-cli-rest-api publishes no limits: it runs on the user's own machine, so a gentle 5 a
 * second per account and 1 a second per chat (Signal's servers answer bursts to one recipient
 * with a 413).
 */
export const signalPlugin = definePlugin({
  kind: "signal",
  title: "Signal",
  settings: SignalSettingsSchema,
  rates: [PER_CHAT_PER_SECOND, { name: "per-account", scope: "account", max: 5, windowMs: 1_000 }],
  create: ({ settings, http, media }: PluginContext<SignalSettings>) => new SignalAdapter(settings, http, media ?? DEFAULT_MEDIA_LIMITS),
});

class SignalAdapter implements ChannelAdapter {
  readonly limits = { textChunk: TEXT_CHUNK, mediaPerMessage: MEDIA_PER_MESSAGE };
  private readonly client: HttpClient;
  private readonly api: SignalApi;
  /** The bridge's receive endpoint, unless the account's `inbound` is "off". */
  readonly inbound?: ChannelInbound;
  readonly polls: ChannelPolls = { send: (poll, signal) => this.sendPoll(poll, signal) };
  /**
   * Signal's typing indicator shows until the next message or about 15 s pass; it is hidden at
   * once, so a turn that ends without an answer (or with one) leaves no indicator behind.
   */
  readonly typing: ChannelTyping = {
    show: (chat, _threadId, signal) => this.api.typing(this.settings.number, signalRecipient(chat), true, signal),
    hide: (chat, _threadId, signal) => this.api.typing(this.settings.number, signalRecipient(chat), false, signal),
  };

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
    // The bridge keeps what people send under the attachment's id.
    const files = bridgeFiles(this.client, (id) => `/v1/attachments/${id}`);
    if (settings.inbound === "receive") this.inbound = { receiver: new SignalReceiver(this.api, settings.number), files };
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

  private async sendPoll(poll: OutboundPoll, signal: AbortSignal): Promise<DeliveryReceipt> {
    const to = signalRecipient(poll.to);
    if (poll.anonymous) throw new ChannelError("unsupported", "Signal polls always show who voted, so an anonymous poll cannot be sent");
    if (poll.threadId !== undefined) throw new ChannelError("unsupported", "a Signal poll cannot quote a message (threadId)");
    const body = { recipient: to, question: poll.question, answers: poll.options, allow_multiple_selections: poll.allowMultipleAnswers };
    return receiptOf([await this.api.createPoll(this.settings.number, body, signal)]);
  }

  /** The bridge answers /v1/about, and the configured number is one of its accounts. */
  async probe(signal: AbortSignal): Promise<ChannelProbe> {
    const identity = this.settings.number;
    await this.api.about(signal);
    const accounts = await this.api.accounts(signal);
    if (!accounts.includes(identity)) return { reachable: false, identity, error: `${identity} is not an account of this signal-cli-rest-api` };
    return { reachable: true, identity };
  }
}
