/**
 * iMessage through a BlueBubbles server on the user's Mac. Text and each attachment are separate
 * messages there (the attachment route takes one file and no caption), so a send is one call
 * per message, each with its own tempGuid derived from the part's idempotency key: BlueBubbles
 * refuses a tempGuid that is still being sent, so a retry cannot overtake the first try.
 * Attachments are downloaded here (SSRF-guarded, at most `delivery.media.maxBytes`) and uploaded.
 * Inbound: the server's webhooks, with its password in the URL (inbound.ts).
 */
import { createHash } from "node:crypto";
import {
  type ChannelAdapter,
  ChannelError,
  type ChannelInbound,
  type ChannelProbe,
  definePlugin,
  type DeliveryReceipt,
  type OutboundMessage,
  PER_CHAT_PER_SECOND,
  receiptOf,
} from "@gw/channels";
import type { HttpClient } from "@gw/http-client";
import { fetchMedia, type MediaFile } from "../bridge/bridge-media.js";
import { bridgeEndpoint } from "../bridge/bridge-url.js";
import { DEFAULT_MEDIA_LIMITS, type HttpClientFactory, type MediaLimits, type PluginContext } from "../registry.js";
import { BlueBubblesApi, blueBubblesErrorBody, type SendMethod } from "./api.js";
import { imessageChatGuid } from "./imessage-address.js";
import { bridgeFiles } from "../inbound-files.js";
import { BlueBubblesWebhook } from "./inbound.js";
import { type IMessageSettings, IMessageSettingsSchema } from "./settings.js";

/**
 * iMessage documents no text limit; BlueBubbles passes text to Messages as it is. 4000 code
 * units keep one bubble readable and stay far from what AppleScript and SMS fallback handle.
 */
const TEXT_CHUNK = 4_000;
/**
 * One file per send: every attachment is its own message (and call) anyway, so delivery gives
 * each its own idempotency key and a retry after a partial failure resends nothing that went out.
 */
const MEDIA_PER_MESSAGE = 1;
/** Sending through Messages.app takes seconds; delivery's deadline rules. */
const CALL_TIMEOUT_MS = 60_000;

/**
 * BlueBubbles publishes no limits: it runs on the user's own Mac, so a gentle 5 a second per
 * account and 1 a second per chat.
 */
export const imessagePlugin = definePlugin({
  kind: "imessage",
  title: "iMessage",
  settings: IMessageSettingsSchema,
  rates: [PER_CHAT_PER_SECOND, { name: "per-account", scope: "account", max: 5, windowMs: 1_000 }],
  create: ({ settings, http, media }: PluginContext<IMessageSettings>) => new IMessageAdapter(settings, http, media ?? DEFAULT_MEDIA_LIMITS),
});

/** The tempGuid of the `n`th message of one part: stable across retries, distinct between parts. */
export function tempGuidFor(idempotencyKey: string, n: number): string {
  return `gw-${createHash("sha256").update(`${n}\n${idempotencyKey}`).digest("hex").slice(0, 32)}`;
}

class IMessageAdapter implements ChannelAdapter {
  readonly limits = { textChunk: TEXT_CHUNK, mediaPerMessage: MEDIA_PER_MESSAGE };
  /** The server's webhooks, authenticated by its password in the URL's query. */
  readonly inbound: ChannelInbound;
  private readonly client: HttpClient;
  private readonly api: BlueBubblesApi;

  constructor(
    private readonly settings: IMessageSettings,
    http: HttpClientFactory,
    private readonly media: MediaLimits,
  ) {
    const endpoint = bridgeEndpoint(settings.bridgeUrl);
    this.client = http({
      name: "bluebubbles",
      baseUrl: endpoint.baseUrl,
      headers: endpoint.headers,
      secrets: [settings.password, ...endpoint.secrets],
      timeoutMs: CALL_TIMEOUT_MS,
      errorBody: blueBubblesErrorBody,
    });
    this.api = new BlueBubblesApi(this.client, settings.password);
    // The server keeps each file a person sends under its guid (the password goes as the query, as on every call).
    const password = encodeURIComponent(settings.password);
    const files = bridgeFiles(this.client, (guid) => `/api/v1/attachment/${guid}/download?password=${password}`);
    this.inbound = { webhook: new BlueBubblesWebhook(settings.password), files };
  }

  validateRecipient(to: string): string {
    return imessageChatGuid(to);
  }

  async send(msg: OutboundMessage, signal: AbortSignal): Promise<DeliveryReceipt> {
    const chatGuid = imessageChatGuid(msg.to);
    const reply = replyAnchor(msg.threadId);
    const method: SendMethod = reply !== undefined || this.settings.privateApi ? "private-api" : "apple-script";
    const common = { chatGuid, method, ...(reply === undefined ? {} : { selectedMessageGuid: reply }) };
    // Every file is fetched before anything is sent, so a bad one sends nothing.
    const files: MediaFile[] = [];
    for (const [i, url] of msg.mediaUrls.entries()) files.push(await fetchMedia(this.client, url, i + 1, this.media, signal));
    const ids: string[] = [];
    if (msg.text !== undefined && msg.text !== "") {
      ids.push(await this.api.sendText({ ...common, tempGuid: tempGuidFor(msg.idempotencyKey, ids.length), message: msg.text }, signal));
    }
    for (const file of files) {
      ids.push(await this.api.sendAttachment({ ...common, tempGuid: tempGuidFor(msg.idempotencyKey, ids.length), file }, signal));
    }
    if (ids.length === 0) throw new ChannelError("rejected", "nothing to send: no text and no media");
    return receiptOf(ids);
  }

  /** The server answers with the password, and the Private API is there when the account needs it. */
  async probe(signal: AbortSignal): Promise<ChannelProbe> {
    const info = await this.api.serverInfo(signal);
    const identity = info.detected_imessage || info.detected_icloud || info.computer_id || undefined;
    const probe = identity === undefined ? {} : { identity };
    if (this.settings.privateApi && !info.private_api) {
      return { ...probe, reachable: false, error: "privateApi is set, but the Private API is off on this BlueBubbles server" };
    }
    if (this.settings.privateApi && !info.helper_connected) {
      return { ...probe, reachable: false, error: "the BlueBubbles Private API helper is not connected" };
    }
    return { ...probe, reachable: true };
  }
}

/** A reply quotes a message by its GUID (BlueBubbles `selectedMessageGuid`). */
function replyAnchor(threadId: string | undefined): string | undefined {
  if (threadId === undefined) return undefined;
  const guid = threadId.trim();
  if (!/^\S+$/.test(guid)) {
    throw new ChannelError("rejected", `threadId "${threadId}" is not a message GUID`, { platformCode: "invalid_thread" });
  }
  return guid;
}
