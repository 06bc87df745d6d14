import { type ChannelAdapter, chunkText, type DeliveryReceipt as PlatformReceipt, isChannelError, type OutboundMessage, rateRulesFor, sendPollVia } from "@gw/channels";
import {
  type DeliveryPollRequest,
  type DeliveryReceipt,
  type DeliverySendRequest,
  GatewayError,
  given,
  isGatewayError,
  readStoredJson,
} from "@gw/contracts";
import { guardUrl, type SsrfPolicy } from "@gw/http-client";
import type { Logger } from "@gw/runtime";
import { type FastStore, fingerprint, KeyedMutex, type RunOnce } from "@gw/store";
import { z } from "zod";
import type { ChannelAccount, ChannelDirectory } from "../channel-directory.js";
import { deadline } from "./deadline.js";
import { toGatewayError } from "./delivery-errors.js";
import type { PaceTarget } from "./pacer.js";
import { CallFailed, callPlatform, type PlatformCallDeps } from "./platform-call.js";

export interface DispatcherDeps extends PlatformCallDeps {
  directory: ChannelDirectory;
  store: FastStore;
  /** Once per idempotencyKey; the value is the part's message ids. */
  idempotency: RunOnce<string[]>;
  /** How long one send or poll may take in all (delivery.sendTimeoutMs). */
  sendTimeoutMs: number;
  /** Per-part progress is kept as long as the idempotency window. */
  windowMs: number;
  /** Media URLs must be public unless allowed here (SSRF guard). */
  media: SsrfPolicy;
  /** delivery.pacing: "off" keeps only the platforms' own cooldowns. */
  pacing?: "platform" | "off";
  /** Told how each send and poll ended: "sent", "cached" or the error code (metrics). */
  onOutcome?: (kind: "send" | "poll", channel: string, outcome: string) => void;
  /** Says when a part's stored progress does not decode (the part is then sent again). */
  logger?: Logger;
}

/** A delivered part's stored progress: its platform message ids. */
const PartDoneSchema = z.array(z.string());

/** Albums are capped at what every platform takes when the adapter says nothing. */
const DEFAULT_MEDIA_PER_MESSAGE = 10;

type Part = Omit<OutboundMessage, "idempotencyKey">;

/** One send or poll at work: its key, whether the key is new, where it goes, its deadline. */
interface SendCall {
  key: string;
  /** The key's first use within the window: no earlier attempt left part records. */
  fresh: boolean;
  account: ChannelAccount;
  target: PaceTarget;
  deadline: AbortSignal;
  /** The target's cooldowns, read along with the claim (for the first part's first call). */
  cooldowns: Promise<number | undefined> | undefined;
}

/** How old a cooldown read along with the claim may be when the first call uses it. */
const PREFETCH_FRESH_MS = 1_000;

/**
 * What one send becomes on the platform, in order: the text in platform-sized chunks
 * (`chunkText`: paragraph, sentence, word boundaries, never inside a code fence or a URL),
 * then the media in albums of at most `mediaPerMessage`.
 */
export function planParts(adapter: ChannelAdapter, to: string, req: DeliverySendRequest): Part[] {
  const threadId = given(req.threadId);
  const common = { to, gifPlayback: req.gifPlayback, ...(threadId === undefined ? {} : { threadId }) };
  const parts: Part[] = [];
  if (req.text !== undefined && req.text.trim() !== "") {
    for (const text of chunkText(req.text, adapter.limits.textChunk)) parts.push({ ...common, text, mediaUrls: [] });
  }
  const perMessage = adapter.limits.mediaPerMessage ?? DEFAULT_MEDIA_PER_MESSAGE;
  for (let i = 0; i < req.mediaUrls.length; i += perMessage) {
    parts.push({ ...common, mediaUrls: req.mediaUrls.slice(i, i + perMessage) });
  }
  return parts;
}

/**
 * Sends and polls: resolve the channel (SPEC §4.1 order), validate the recipient before any
 * call, then run the platform calls once per idempotency key. Each chat's parts go out in
 * order, one send after another (per process); every part's message ids are stored as it
 * succeeds, so a retry after a partial failure sends only what is missing.
 */
export class Dispatcher {
  private readonly chats = new KeyedMutex();

  constructor(private readonly deps: DispatcherDeps) {}

  /**
   * Everything a send can be refused for before any platform call: the channel and account,
   * the recipient (given, or the identifier of a channel's session key), the media URLs.
   */
  prepare(req: DeliverySendRequest): { account: ChannelAccount; to: string; parts: Part[] } {
    const { account, via } = this.deps.directory.resolve(req);
    let rawTo = req.to;
    const sessionKey = req.sessionKey ?? "";
    if (rawTo === "" && via === "sessionKey") rawTo = sessionKey.slice(sessionKey.indexOf(":") + 1);
    if (rawTo === "") throw new GatewayError("INVALID_REQUEST", "to is required (no recipient given, and the session key names none)");
    const to = this.recipient(account, rawTo);
    const mediaUrls = req.mediaUrls.map((url, i) => this.checkMedia(url, i));
    const parts = planParts(account.adapter, to, { ...req, mediaUrls });
    if (parts.length === 0) throw new GatewayError("INVALID_REQUEST", "give at least one of message, mediaUrl, mediaUrls");
    return { account, to, parts };
  }

  send(req: DeliverySendRequest): Promise<DeliveryReceipt> {
    return this.observed("send", req, () => this.sendOnce(req));
  }

  poll(req: DeliveryPollRequest): Promise<DeliveryReceipt> {
    return this.observed("poll", req, () => this.pollOnce(req));
  }

  private async observed(
    kind: "send" | "poll",
    req: DeliverySendRequest | DeliveryPollRequest,
    work: () => Promise<DeliveryReceipt>,
  ): Promise<DeliveryReceipt> {
    const report = this.deps.onOutcome;
    if (report === undefined) return work();
    try {
      const receipt = await work();
      report(kind, receipt.channel, receipt.cached ? "cached" : "sent");
      return receipt;
    } catch (err) {
      report(kind, this.channelLabel(req), isGatewayError(err) ? err.code : "INTERNAL");
      throw err;
    }
  }

  /** A configured channel id, or "unknown": label values must stay a bounded set. */
  private channelLabel(req: DeliverySendRequest | DeliveryPollRequest): string {
    try {
      return this.deps.directory.resolve(req).account.channelId;
    } catch {
      return "unknown";
    }
  }

  private async sendOnce(req: DeliverySendRequest): Promise<DeliveryReceipt> {
    const { account, to, parts } = this.prepare(req);
    const print = fingerprint(["send", account.channelId, account.accountId, to, parts]);
    return this.once(req.idempotencyKey, print, account, to, async (call) => {
      const ids: string[] = [];
      for (const [i, part] of parts.entries()) {
        ids.push(...(await this.part(call, i, (signal) => account.adapter.send({ ...part, idempotencyKey: `${req.idempotencyKey}:${i}` }, signal))));
      }
      return ids;
    });
  }

  private async pollOnce(req: DeliveryPollRequest): Promise<DeliveryReceipt> {
    const { account } = this.deps.directory.resolve(req);
    const to = this.recipient(account, req.to);
    if (account.adapter.polls === undefined) {
      throw new GatewayError("NOT_SUPPORTED", `channel "${account.channelId}" (${account.kind}) has no polls`);
    }
    const threadId = given(req.threadId);
    const poll = {
      to,
      question: req.question,
      options: req.options,
      allowMultipleAnswers: req.allowMultipleAnswers,
      anonymous: req.anonymous,
      ...(threadId === undefined ? {} : { threadId }),
    };
    const print = fingerprint(["poll", account.channelId, account.accountId, poll]);
    return this.once(req.idempotencyKey, print, account, to, (call) =>
      this.part(call, 0, (signal) => sendPollVia(account.adapter, { ...poll, idempotencyKey: `${req.idempotencyKey}:poll` }, signal)),
    );
  }

  private recipient(account: ChannelAccount, to: string): string {
    try {
      return account.adapter.validateRecipient(to);
    } catch (err) {
      if (isChannelError(err)) throw toGatewayError(err, { channelId: account.channelId });
      throw err;
    }
  }

  private checkMedia(url: string, index: number): string {
    try {
      return guardUrl(url, this.deps.media).href;
    } catch (err) {
      throw new GatewayError("INVALID_REQUEST", `mediaUrls[${index}]: ${(err as Error).message}`);
    }
  }

  /** The idempotent, ordered, deadline-bounded frame around one send or poll. */
  private async once(
    key: string,
    print: string,
    account: ChannelAccount,
    to: string,
    work: (call: SendCall) => Promise<string[]>,
  ): Promise<DeliveryReceipt> {
    const deadlineAt = Date.now() + this.deps.sendTimeoutMs;
    const target: PaceTarget = {
      account: `${account.channelId}:${account.accountId}`,
      chat: to,
      rules: this.deps.pacing === "off" ? [] : rateRulesFor(account.rates, to),
    };
    // The chat's turn is taken first, before any await, so one chat's sends keep the order in
    // which they reached this replica; a repeat of a key waits here too, then finds the result.
    const { value: ids, cached } = await this.chats.run(`${account.channelId}:${account.accountId}:${to}`, () => {
      // Read with the claim (one Redis write and round trip for both); unused when the key was.
      const prefetched = this.deps.pacer.prefetch(target);
      const readAt = Date.now();
      return this.deps.idempotency.run(key, print, deadlineAt, async (fresh) => {
        const limit = deadline(deadlineAt - Date.now());
        // A request that first waited for another with its key reads again.
        const cooldowns = Date.now() - readAt < PREFETCH_FRESH_MS ? prefetched : undefined;
        try {
          return await work({ key, fresh, account, target, deadline: limit.signal, cooldowns });
        } finally {
          limit.done();
        }
      });
    });
    return {
      channel: account.channelId,
      accountId: account.accountId,
      to,
      messageId: ids[0] ?? "",
      messageIds: ids,
      cached,
    };
  }

  /**
   * One part, unless an earlier attempt with this key already delivered it. On the key's first
   * use (`fresh`) there was no earlier attempt, so there is nothing to look up.
   */
  private async part(
    { key, fresh, account, target, deadline, cooldowns }: SendCall,
    index: number,
    call: (signal: AbortSignal) => Promise<PlatformReceipt>,
  ): Promise<string[]> {
    const doneKey = `delivery:part:${key}:${index}`;
    const done = fresh ? null : await this.deps.store.values.get(doneKey);
    const stored = done === null ? undefined : readStoredJson(done, PartDoneSchema);
    if (stored?.ok) return stored.value;
    if (stored !== undefined) this.deps.logger?.error({ key: doneKey, problem: stored.problem }, "a part's corrupt delivery record is ignored: the part is sent again");
    let receipt: PlatformReceipt;
    try {
      receipt = await callPlatform(this.deps, account, target, deadline, call, index === 0 ? cooldowns : undefined);
    } catch (err) {
      if (err instanceof CallFailed) throw toGatewayError(err.error, { channelId: account.channelId, attempts: err.attempts });
      throw toGatewayError(err, { channelId: account.channelId });
    }
    await this.deps.store.values.set(doneKey, JSON.stringify(receipt.messageIds), { ttlMs: this.deps.windowMs });
    return receipt.messageIds;
  }
}
