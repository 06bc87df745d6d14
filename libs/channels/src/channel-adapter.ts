/**
 * The channel plugin port: what the delivery service needs from one account of one messaging
 * platform. Platform-neutral on purpose, so delivery never sees a wire format (the model for
 * this seam is the ModelProvider port in services/agent-runner/src/providers/).
 */
import { ChannelError } from "./channel-error.js";
import type { ChannelReceiver, InboundEndpoint } from "./inbound.js";

export interface ChannelLimits {
  /**
   * The longest text one platform message takes, in UTF-16 code units (what the platforms
   * count). Delivery splits longer text with `chunkText(text, textChunk)` before `send`.
   */
  textChunk: number;
  /** Whether the platform has native polls; `sendPoll` exists exactly when this is true. */
  polls: boolean;
  /**
   * The most media URLs one `send` takes (an album); delivery spreads longer lists over
   * several sends. Undefined: no limit of the adapter's own.
   */
  mediaPerMessage?: number;
}

export interface OutboundMessage {
  /** The recipient as `validateRecipient` returned it. */
  to: string;
  /** At most `limits.textChunk` code units; absent for media-only sends. */
  text?: string;
  /** Public http(s) URLs of attachments, in the order they should appear. */
  mediaUrls: string[];
  /** Send GIFs as looping animations where the platform distinguishes them. */
  gifPlayback: boolean;
  /**
   * The platform's thread or reply anchor: a Telegram forum topic, a Slack `thread_ts`, a
   * Discord thread channel, the message a Signal/WhatsApp/iMessage reply quotes.
   */
  threadId?: string;
  /**
   * The same for every retry of this one part of a send (delivery derives it from the client's
   * idempotencyKey and the part's index). Platforms that dedupe on a client-chosen id get it
   * (BlueBubbles `tempGuid`, Discord `nonce`), so a retry after a lost response is not
   * delivered twice.
   */
  idempotencyKey: string;
}

export interface OutboundPoll {
  to: string;
  question: string;
  options: string[];
  allowMultipleAnswers: boolean;
  /** Hide who voted. An adapter whose platform always shows voters refuses with "unsupported". */
  anonymous: boolean;
  threadId?: string;
  idempotencyKey: string;
}

export interface DeliveryReceipt {
  /** The first platform message id: what `send` answers as `messageId`. */
  messageId: string;
  /** Every platform message one call produced (an album, a caption plus text), in order. */
  messageIds: string[];
  /**
   * The platform said this recipient's route is used up for this long even though the call
   * succeeded (Discord: `X-RateLimit-Remaining: 0` with `X-RateLimit-Reset-After`). Delivery
   * holds the next call to the same chat, on every replica, until it has passed.
   */
  cooldownMs?: number;
}

export interface ChannelProbe {
  /** Whether this account can deliver right now (platform answered and accepted the credentials). */
  reachable: boolean;
  /** How the platform names the account, e.g. "@ops_bot" or "+15550001111". */
  identity?: string;
  /** Why not reachable: the platform's reason, never a credential. */
  error?: string;
}

export interface ChannelAdapter {
  readonly limits: ChannelLimits;
  /**
   * The recipient in the form `send` expects (trimmed, E.164 for phone numbers, ...).
   * Throws ChannelError kind "recipient" for a malformed one, without any network call.
   */
  validateRecipient(to: string): string;
  /** Throws ChannelError; an AbortError when `signal` fires first. */
  send(msg: OutboundMessage, signal: AbortSignal): Promise<DeliveryReceipt>;
  sendPoll?(poll: OutboundPoll, signal: AbortSignal): Promise<DeliveryReceipt>;
  /** Never throws for platform failures: they are `reachable: false` with the reason. */
  status(signal: AbortSignal): Promise<ChannelProbe>;
  /** Webhook platforms: verifies and parses a forwarded request (libs/channels/src/inbound.ts). */
  readonly inbound?: InboundEndpoint;
  /** Polling and gateway platforms: reads the account's messages (one reader per account). */
  readonly receiver?: ChannelReceiver;
  /**
   * Shows "typing…" in a chat until the next message or a few seconds pass, where the platform
   * can. `replyingTo` is the eventId of the inbound message being answered, for platforms whose
   * indicator hangs off it (WhatsApp); without it they show nothing.
   */
  typing?(chat: string, threadId: string | undefined, signal: AbortSignal, replyingTo?: string): Promise<void>;
  /** How often a showing indicator is renewed (default 4 s: Telegram's fades after 5 s). */
  readonly typingRenewMs?: number;
  /** Hides "typing…" at once where the platform can; elsewhere it fades, or the answer clears it. */
  stopTyping?(chat: string, threadId: string | undefined, signal: AbortSignal): Promise<void>;
}

/** One account of one configured channel, as a plugin factory receives it. */
export interface ChannelPluginConfig<Settings = Record<string, unknown>, Http = unknown> {
  channelId: string;
  accountId: string;
  /** Validated by the plugin's settings schema (see channel-settings.ts). */
  settings: Settings;
  /** The outbound HTTP client (libs/http-client) the composition root hands in. */
  http: Http;
}

export type ChannelPluginFactory<Settings = Record<string, unknown>, Http = unknown> = (
  config: ChannelPluginConfig<Settings, Http>,
) => ChannelAdapter;

/** A receipt for `ids` (in platform order); a send that produced nothing is a bug, not a receipt. */
export function receiptOf(ids: readonly string[]): DeliveryReceipt {
  const [first] = ids;
  if (first === undefined) throw new Error("a delivery receipt needs at least one message id");
  return { messageId: first, messageIds: [...ids] };
}

/** `adapter.sendPoll`, or the "unsupported" ChannelError when the platform has no polls. */
export function sendPollVia(adapter: ChannelAdapter, poll: OutboundPoll, signal: AbortSignal): Promise<DeliveryReceipt> {
  if (!adapter.limits.polls || adapter.sendPoll === undefined) {
    return Promise.reject(new ChannelError("unsupported", "this channel has no polls"));
  }
  return adapter.sendPoll(poll, signal);
}
