/**
 * The channel contract's reference adapter, over the in-memory platform: correct unless told
 * which flaws to have, each of which some check of the contract must catch.
 */
import { type ChannelAdapter, type ChannelInbound, type DeliveryReceipt, receiptOf } from "../src/channel-adapter.js";
import { ChannelError } from "../src/channel-error.js";
import type { InboundEndpoint, InboundMessage, RawInbound } from "../src/inbound.js";
import { abortableSleep, type Call, LIMIT, type MemoryPlatform, PlatformFailure, TOKENS } from "./memory-platform.js";

/** Ways an adapter can be wrong. */
export interface Flaws {
  leakSecret?: boolean;
  ignoreThread?: boolean;
  laxRecipients?: boolean;
  rateLimitAsUnavailable?: boolean;
  localIds?: boolean;
  overstateChunk?: boolean;
  ignoreAbort?: boolean;
  constantKey?: boolean;
  noReason?: boolean;
  syncThrow?: boolean;
  noPolls?: boolean;
  probeIgnoresAbort?: boolean;
  typingIgnoresAbort?: boolean;
  emptyInbound?: boolean;
  acceptsForged?: boolean;
  throwsOnMalformed?: boolean;
  newEventIds?: boolean;
  receiverRepeats?: boolean;
  receiverIgnoresAbort?: boolean;
}

/** What the registry's http client does with every configured secret. */
function scrub(text: string): string {
  let out = text;
  for (const secret of TOKENS.keys()) out = out.replaceAll(secret, "[redacted]");
  return out;
}

const never = () => new AbortController().signal;

function failure(err: unknown, token: string, flaws: Flaws): unknown {
  if (!(err instanceof PlatformFailure)) return err;
  const { step } = err;
  const secretNote = flaws.leakSecret ? ` (token ${token})` : "";
  if (step.kind === "reject") {
    const reason = flaws.noReason ? "refused" : scrub(step.reason ?? "refused");
    return new ChannelError("rejected", `memory platform refused: ${reason}${secretNote}`, { status: step.status ?? 400 });
  }
  if (step.kind === "rate_limit" && !flaws.rateLimitAsUnavailable) {
    return new ChannelError("rate_limited", "memory platform: slow down", { status: 429, retryAfterMs: step.retryAfterSeconds * 1000 });
  }
  return new ChannelError("unavailable", `memory platform unavailable${secretNote}`);
}

/** Webhook requests carry the account's token in `x-token`; the body is `{ id, chat, from, text }`. */
function memoryWebhook(token: string, flaws: Flaws): InboundEndpoint {
  const refused = (status: number, error: string) => ({ reply: { status, body: JSON.stringify({ error }) }, messages: [] });
  return {
    async handle(req: RawInbound) {
      if (!flaws.acceptsForged && req.headers["x-token"] !== token) return refused(401, "wrong token");
      let body: { id?: unknown; chat?: unknown; from?: unknown; text?: unknown };
      try {
        body = JSON.parse(Buffer.from(req.body).toString("utf8")) as typeof body;
      } catch (err) {
        if (flaws.throwsOnMalformed) throw err;
        return refused(400, "not JSON");
      }
      if (typeof body.id !== "string" || typeof body.chat !== "string" || typeof body.from !== "string" || typeof body.text !== "string") {
        return refused(400, "not a message");
      }
      const eventId = flaws.newEventIds ? `${body.id}-${Math.random()}` : body.id;
      return { reply: { status: 200, body: "{}" }, messages: [person(eventId, body.chat, body.from, body.text)] };
    },
  };
}

function person(eventId: string, chat: string, sender: string, text: string): InboundMessage {
  return { eventId, chat, sender, chatType: "direct", mentioned: false, fromBot: false, text, sentAt: Date.now() };
}

function memoryInbound(platform: MemoryPlatform, token: string, flaws: Flaws): ChannelInbound {
  if (flaws.emptyInbound) return {};
  return {
    webhook: memoryWebhook(token, flaws),
    receiver: {
      async *receive(cursor, signal) {
        let seen = flaws.receiverRepeats || cursor === undefined ? 0 : Number(cursor);
        const listen = flaws.receiverIgnoresAbort ? never() : signal;
        while (!listen.aborted) {
          const fresh = platform.inbox.slice(seen);
          if (fresh.length > 0) {
            seen = platform.inbox.length;
            yield { messages: fresh.map((m) => person(m.id, m.chat, m.from, m.text)), cursor: String(seen) };
          }
          await abortableSleep(20, listen).catch(() => undefined);
        }
      },
    },
  };
}

export function memoryAdapter(platform: MemoryPlatform, token: string, flaws: Flaws = {}): ChannelAdapter {
  const validateRecipient = (to: string): string => {
    const chat = to.trim();
    if (!flaws.laxRecipients && !/^chat-\w+$/.test(chat)) throw new ChannelError("recipient", `not a chat id: ${JSON.stringify(to)}`);
    return chat;
  };
  const call = async (path: string, body: Call | undefined, signal: AbortSignal): Promise<string[]> => {
    try {
      return await platform.call(token, path, body, signal);
    } catch (err) {
      throw failure(err, token, flaws);
    }
  };
  const deliver = async (path: string, body: Call, signal: AbortSignal): Promise<DeliveryReceipt> => {
    const ids = await call(path, body, flaws.ignoreAbort ? never() : signal);
    return receiptOf(flaws.localIds ? ids.map((id) => `local-${id}`) : ids);
  };
  const sendNow: ChannelAdapter["send"] = (msg, signal) =>
    deliver(
      "/send",
      {
        chat: validateRecipient(msg.to),
        text: msg.text,
        media: msg.mediaUrls,
        thread: flaws.ignoreThread ? undefined : msg.threadId,
        key: flaws.constantKey ? "same" : msg.idempotencyKey,
      },
      signal,
    );
  return {
    limits: { textChunk: flaws.overstateChunk ? LIMIT * 2 : LIMIT },
    validateRecipient,
    // Validation inside the async function: a bad recipient rejects rather than throws.
    send: flaws.syncThrow ? sendNow : async (msg, signal) => sendNow(msg, signal),
    probe: async (signal) => {
      await call("/me", undefined, flaws.probeIgnoresAbort ? never() : signal);
      return { reachable: true, identity: TOKENS.get(token) };
    },
    ...(flaws.noPolls
      ? {}
      : {
          polls: {
            send: async (p, signal) =>
              deliver("/poll", { chat: validateRecipient(p.to), poll: { question: p.question, options: p.options, multiple: p.allowMultipleAnswers, anonymous: p.anonymous }, key: p.idempotencyKey }, signal),
          },
        }),
    typing: {
      show: async (chat, _threadId, signal) => {
        await call("/typing", { chat: validateRecipient(chat) }, flaws.typingIgnoresAbort ? never() : signal);
      },
    },
    inbound: memoryInbound(platform, token, flaws),
  };
}
