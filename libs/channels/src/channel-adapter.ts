/**
 * The channel plugin port: what the delivery service needs from one account of one messaging
 * platform. Platform-neutral on purpose, so delivery never sees a wire format (the model for
 * this seam is the ModelProvider port in services/agent-runner/src/providers/).
 */
import { ChannelError } from "./channel-error.js";
import type { ChannelReceiver, InboundEndpoint, InboundFiles } from "./inbound.js";

export interface ChannelLimits {
  /**
   * The longest text one platform message takes, in UTF-16 code units (what the platforms
   * count). Delivery splits longer text with `chunkText(text, textChunk)` before `send`.
   */
  textChunk: number;
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

/** Native polls. */
export interface ChannelPolls {
  /** Throws ChannelError like `send`; "unsupported" for a poll the platform cannot show (e.g. anonymous). */
  send(poll: OutboundPoll, signal: AbortSignal): Promise<DeliveryReceipt>;
}

/**
 * How people's messages reach the gateway (inbound.ts): a webhook endpoint the edge forwards
 * the platform's requests to, a receiver delivery runs (one reader per account across
 * replicas), or both, as the account's settings ask.
 */
export interface ChannelInbound {
  readonly webhook?: InboundEndpoint;
  readonly receiver?: ChannelReceiver;
  /** Where delivery can fetch the files people send (images for the agent). */
  readonly files?: InboundFiles;
}

/** A "typing…" indicator, shown while the agent works. */
export interface ChannelTyping {
  /**
   * Shows it in a chat until the next message or a few seconds pass. `replyingTo` is the eventId
   * of the inbound message being answered, for platforms whose indicator hangs off it (WhatsApp);
   * without it they show nothing. Throws ChannelError; an AbortError when `signal` fires first.
   */
  show(chat: string, threadId: string | undefined, signal: AbortSignal, replyingTo?: string): Promise<void>;
  /** How often a showing indicator is renewed (default 4 s: Telegram's fades after 5 s). */
  readonly renewMs?: number;
  /** Hides it at once where the platform can; elsewhere it fades, or the answer clears it. */
  hide?(chat: string, threadId: string | undefined, signal: AbortSignal): Promise<void>;
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
  /**
   * Asks the platform about the account: what it answered (`reachable: false` with the reason
   * when the answer says the account cannot deliver). A failed call throws, like `send`.
   * Delivery reads it only through `statusOf`, which never throws.
   */
  probe(signal: AbortSignal): Promise<ChannelProbe>;
  /** Where the platform has native polls. */
  readonly polls?: ChannelPolls;
  /** Where the account takes people's messages. */
  readonly inbound?: ChannelInbound;
  /** Where the platform shows bots typing. */
  readonly typing?: ChannelTyping;
}

/** A receipt for `ids` (in platform order); a send that produced nothing is a bug, not a receipt. */
export function receiptOf(ids: readonly string[]): DeliveryReceipt {
  const [first] = ids;
  if (first === undefined) throw new Error("a delivery receipt needs at least one message id");
  return { messageId: first, messageIds: [...ids] };
}

/** `adapter.polls.send`, or the "unsupported" ChannelError when the platform has no polls. */
export function sendPollVia(adapter: ChannelAdapter, poll: OutboundPoll, signal: AbortSignal): Promise<DeliveryReceipt> {
  if (adapter.polls === undefined) return Promise.reject(new ChannelError("unsupported", "this channel has no polls"));
  return adapter.polls.send(poll, signal);
}

const failedProbe = (err: unknown): ChannelProbe => ({ reachable: false, error: err instanceof Error ? err.message : String(err) });

/**
 * The account's status, the one way delivery reads it: never throws. A probe that fails (a
 * platform error, a bug) is `reachable: false` with its message; when `signal` fires before the
 * probe answers, the answer is `reachable: false` at once, whatever the probe still waits for.
 */
export async function statusOf(adapter: ChannelAdapter, signal: AbortSignal): Promise<ChannelProbe> {
  if (signal.aborted) return failedProbe(signal.reason);
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<ChannelProbe>((resolve) => {
    onAbort = () => resolve(failedProbe(signal.reason));
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    const probed = Promise.resolve()
      .then(() => adapter.probe(signal))
      .catch(failedProbe);
    return await Promise.race([probed, aborted]);
  } finally {
    if (onAbort !== undefined) signal.removeEventListener("abort", onAbort);
  }
}
