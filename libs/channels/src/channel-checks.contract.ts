/**
 * The checks of the channel contract's outbound side, one function each, so the suite itself can
 * be tested: a correct adapter passes them all, and each deliberately broken one fails its check.
 */
import { expect } from "vitest";
import { type DeliveryReceipt, sendPollVia, statusOf } from "./channel-adapter.js";
import { ChannelError } from "./channel-error.js";
import type { ChannelHarness } from "./channel.contract.js";
import {
  channelError,
  CONTRACT_REJECTION_REASON,
  errorTexts,
  expectMedia,
  expectNoSecrets,
  expectReceiptMatches,
  first,
  message,
  poll,
  signal,
  TEXT,
} from "./check-helpers.contract.js";
import { MIN_CHUNK_LIMIT } from "./chunk/chunk-text.js";

export interface ContractCheck {
  name: string;
  /** When false for this harness, the check is skipped (e.g. polls on a platform without them). */
  applies?(h: ChannelHarness): boolean;
  run(h: ChannelHarness): Promise<void>;
}

export { CONTRACT_REJECTION_REASON } from "./check-helpers.contract.js";

export const SEND_CHECKS: readonly ContractCheck[] = [
  {
    name: "declares limits it can keep: a chunk size and a media count",
    run: async (h) => {
      for (const { adapter } of h.accounts) {
        const { limits } = adapter;
        expect(Number.isInteger(limits.textChunk) && limits.textChunk >= MIN_CHUNK_LIMIT).toBe(true);
        if (limits.mediaPerMessage !== undefined) expect(Number.isInteger(limits.mediaPerMessage) && limits.mediaPerMessage >= 1).toBe(true);
      }
    },
  },
  {
    name: "sends text: one platform message, the platform's id in the receipt, the expected request",
    run: async (h) => {
      const adapter = first(h);
      const receipt = await adapter.send(message(h, adapter), signal());
      expectReceiptMatches(h, receipt);
      expect(h.fake.delivered).toHaveLength(1);
      expect(h.fake.delivered[0]).toMatchObject({ account: h.accounts[0].identity, chat: h.recipient.chat, text: TEXT });
      expect(h.fake.requests.at(-1)).toMatchObject(h.expectedTextRequest(TEXT));
    },
  },
  {
    name: "sends a text of exactly limits.textChunk code units whole (astral characters included)",
    run: async (h) => {
      const adapter = first(h);
      const size = adapter.limits.textChunk;
      let text = size >= 3 ? "😀" : "";
      while (text.length + " word 😀".length <= size - 1) text += " word 😀";
      text += "x".repeat(size - text.length);
      const receipt = await adapter.send(message(h, adapter, { text }), signal());
      expectReceiptMatches(h, receipt);
      expect(h.fake.delivered.map((d) => d.text).join("")).toBe(text);
    },
  },
  {
    name: "sends media by URL with a caption",
    run: async (h) => {
      const adapter = first(h);
      const receipt = await adapter.send(message(h, adapter, { text: "A caption", mediaUrls: [h.media.urls[0]] }), signal());
      expectReceiptMatches(h, receipt);
      expectMedia(h, [0]);
      expect(h.fake.delivered.some((d) => d.text === "A caption")).toBe(true);
      expect(h.fake.delivered.every((d) => d.chat === h.recipient.chat)).toBe(true);
    },
  },
  {
    name: "sends several media in order, the receipt listing every message",
    applies: (h) => (first(h).limits.mediaPerMessage ?? 2) >= 2,
    run: async (h) => {
      const adapter = first(h);
      const receipt = await adapter.send(message(h, adapter, { text: undefined, mediaUrls: [...h.media.urls] }), signal());
      expectReceiptMatches(h, receipt);
      expectMedia(h, [0, 1]);
    },
  },
  {
    name: "sends a poll with its options and answer mode",
    applies: (h) => first(h).polls !== undefined,
    run: async (h) => {
      const adapter = first(h);
      const p = poll(h, adapter);
      const receipt = await sendPollVia(adapter, p, signal());
      expectReceiptMatches(h, receipt);
      expect(h.fake.delivered).toHaveLength(1);
      expect(h.fake.delivered[0]).toMatchObject({ chat: h.recipient.chat, account: h.accounts[0].identity });
      expect(h.fake.delivered[0]!.poll).toEqual({ question: p.question, options: p.options, allowMultipleAnswers: true, anonymous: false });
    },
  },
  {
    name: "sends an anonymous poll as anonymous, or refuses it as unsupported without a call",
    applies: (h) => first(h).polls !== undefined,
    run: async (h) => {
      const adapter = first(h);
      const p = poll(h, adapter, { anonymous: true, allowMultipleAnswers: false });
      let receipt: DeliveryReceipt | undefined;
      try {
        receipt = await sendPollVia(adapter, p, signal());
      } catch (err) {
        expect(err).toBeInstanceOf(ChannelError);
        expect((err as ChannelError).kind).toBe("unsupported");
        expect(h.fake.requests).toHaveLength(0);
        return;
      }
      expectReceiptMatches(h, receipt);
      expect(h.fake.delivered[0]!.poll).toMatchObject({ anonymous: true, allowMultipleAnswers: false });
    },
  },
  {
    name: "refuses polls as unsupported, without a call, where the platform has none",
    applies: (h) => first(h).polls === undefined,
    run: async (h) => {
      const adapter = first(h);
      await channelError(() => sendPollVia(adapter, poll(h, adapter), signal()), "unsupported");
      expect(h.fake.requests).toHaveLength(0);
    },
  },
  {
    name: "puts a threadId on the platform's thread",
    run: async (h) => {
      const adapter = first(h);
      const receipt = await adapter.send(message(h, adapter, { threadId: h.threadId }), signal());
      expectReceiptMatches(h, receipt);
      expect(h.fake.delivered[0]).toMatchObject({ chat: h.recipient.chat, threadId: h.threadId, text: TEXT });
    },
  },
  {
    name: "sends from each account with that account's own credentials",
    run: async (h) => {
      for (const account of [h.accounts[1], h.accounts[0]]) {
        await account.adapter.send(message(h, account.adapter), signal());
      }
      expect(h.fake.delivered.map((d) => d.account)).toEqual([h.accounts[1].identity, h.accounts[0].identity]);
      expect(h.accounts[0].identity).not.toBe(h.accounts[1].identity);
    },
  },
  {
    name: "refuses malformed recipients before any call to the platform",
    run: async (h) => {
      const adapter = first(h);
      expect(h.invalidRecipients.length).toBeGreaterThan(0);
      for (const bad of h.invalidRecipients) {
        let thrown: unknown;
        try {
          adapter.validateRecipient(bad);
        } catch (err) {
          thrown = err;
        }
        expect(thrown, `validateRecipient(${JSON.stringify(bad)}) should throw`).toBeInstanceOf(ChannelError);
        const err = thrown as ChannelError;
        expect(err.kind).toBe("recipient");
        expect(err.retryable).toBe(false);
        await channelError(() => adapter.send({ ...message(h, adapter), to: bad }, signal()), "recipient");
      }
      expect(h.fake.requests).toHaveLength(0);
      const valid = adapter.validateRecipient(h.recipient.to);
      expect(adapter.validateRecipient(valid)).toBe(valid);
    },
  },
  {
    name: "maps a permanent platform refusal (4xx) to 'rejected' with the platform's reason",
    run: async (h) => {
      const adapter = first(h);
      h.fake.next({ kind: "reject", reason: CONTRACT_REJECTION_REASON });
      const err = await channelError(() => adapter.send(message(h, adapter), signal()), "rejected");
      expect(err.retryable).toBe(false);
      expect(err.message).toContain(CONTRACT_REJECTION_REASON);
      expectNoSecrets(h, errorTexts(err));
      expect(h.fake.delivered).toHaveLength(0);
    },
  },
  {
    name: "keeps credentials out of error messages, even when the platform quotes them back",
    run: async (h) => {
      const adapter = first(h);
      for (const secret of h.secrets) {
        h.fake.next({ kind: "reject", reason: `invalid_token ${secret}` });
        const err = await channelError(() => adapter.send(message(h, adapter), signal()), "rejected");
        expectNoSecrets(h, errorTexts(err));
      }
    },
  },
  {
    name: "maps a 429 to 'rate_limited' with the platform's wait, without retrying by itself",
    run: async (h) => {
      const adapter = first(h);
      h.fake.next({ kind: "rate_limit", retryAfterSeconds: 7 });
      const err = await channelError(() => adapter.send(message(h, adapter), signal()), "rate_limited");
      expect(err.retryable).toBe(true);
      if (h.fake.tellsRetryAfter) expect(err.retryAfterMs).toBe(7_000);
      expect(h.fake.requests).toHaveLength(1);
      expectNoSecrets(h, errorTexts(err));
    },
  },
  {
    name: "maps 5xx answers and cut connections to 'unavailable'",
    run: async (h) => {
      const adapter = first(h);
      for (const step of [{ kind: "unavailable" } as const, { kind: "unavailable", status: 500 } as const, { kind: "drop" } as const]) {
        h.fake.next(step);
        const err = await channelError(() => adapter.send(message(h, adapter), signal()), "unavailable");
        expect(err.retryable).toBe(true);
        expectNoSecrets(h, errorTexts(err));
      }
      expect(h.fake.delivered).toHaveLength(0);
    },
  },
  {
    name: "stops at once with an AbortError when the signal fires",
    run: async (h) => {
      const adapter = first(h);
      h.fake.next({ kind: "delay", ms: 5_000 });
      const controller = new AbortController();
      const started = Date.now();
      setTimeout(() => controller.abort(), 100);
      const outcome = await adapter.send(message(h, adapter), controller.signal).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(outcome, "the send should have been aborted").toBeInstanceOf(Error);
      expect((outcome as Error).name).toBe("AbortError");
      expect(Date.now() - started).toBeLessThan(2_000);
    },
  },
  {
    name: "probes status: reachable when the platform answers, not reachable (and no throw) when it fails",
    run: async (h) => {
      for (const { adapter } of h.accounts) {
        const probe = await statusOf(adapter, signal());
        expect(probe.reachable, probe.error).toBe(true);
      }
      h.fake.next({ kind: "unavailable" }, 5);
      const down = await statusOf(first(h), signal());
      expect(down.reachable).toBe(false);
      expect(typeof down.error).toBe("string");
      expectNoSecrets(h, down.error ?? "");
    },
  },
  {
    name: "sends one message for a repeated idempotency key where the platform dedupes, two for two keys",
    applies: (h) => h.fake.dedupesOnClientKey,
    run: async (h) => {
      const adapter = first(h);
      const once = message(h, adapter);
      const a = await adapter.send(once, signal());
      const b = await adapter.send({ ...once }, signal());
      expect(b).toEqual(a);
      expect(h.fake.delivered).toHaveLength(1);
      await adapter.send(message(h, adapter), signal());
      expect(h.fake.delivered).toHaveLength(2);
    },
  },
];
