/**
 * The checks of the channel contract beyond sending: how the account reports its status under
 * abort, and its optional capabilities (typing, inbound webhooks and receivers), each a function
 * so the suite itself can be tested against deliberately broken adapters.
 */
import { expect } from "vitest";
import { type ChannelAdapter, statusOf } from "./channel-adapter.js";
import type { ChannelHarness, ReceiverHarness } from "./channel.contract.js";
import type { ContractCheck } from "./channel-checks.contract.js";
import { expectAbortWhileWaiting, expectNoSecrets, first, signal, TEXT } from "./check-helpers.contract.js";
import type { InboundMessage, InboundResult, RawInbound } from "./inbound.js";

/** The adapters the harness has: the two sending accounts and the inbound ones. */
function adapters(h: ChannelHarness): ChannelAdapter[] {
  return [...h.accounts.map((a) => a.adapter), h.inbound?.webhook?.adapter, h.inbound?.receiver?.adapter].filter((a) => a !== undefined);
}

/** A person's message as the platform's inbound side must describe it. */
function expectPersonsMessage(h: ChannelHarness, msg: InboundMessage | undefined, text: string): void {
  expect(msg, "no message parsed").toBeDefined();
  expect(msg).toMatchObject({ chat: h.inbound!.from.chat, sender: h.inbound!.from.sender, text, fromBot: false });
  expect(typeof msg!.eventId === "string" && msg!.eventId !== "").toBe(true);
  expect(Number.isFinite(msg!.sentAt)).toBe(true);
}

/** Handles `req`, which must not throw whatever it carries. */
async function handled(h: ChannelHarness, req: RawInbound): Promise<InboundResult> {
  const endpoint = h.inbound!.webhook!.adapter.inbound?.webhook;
  expect(endpoint, "the webhook account has no inbound.webhook").toBeDefined();
  return endpoint!.handle(req);
}

/**
 * Has a person write `text` and reads from `cursor` until a batch holds it; answers every message
 * read and the cursor after it.
 */
async function readUntil(r: ReceiverHarness, cursor: string | undefined, text: string): Promise<{ messages: InboundMessage[]; cursor: string }> {
  const receiver = r.adapter.inbound?.receiver;
  expect(receiver, "the receiver account has no inbound.receiver").toBeDefined();
  const controller = new AbortController();
  const bound = setTimeout(() => controller.abort(), 10_000);
  const messages: InboundMessage[] = [];
  // A live platform delivers only to a connected receiver: its `write` runs while the receiver reads.
  if (r.live !== true) await r.write(text);
  const writing = r.live === true ? Promise.resolve(r.write(text)) : Promise.resolve();
  try {
    for await (const batch of receiver!.receive(cursor, AbortSignal.any([controller.signal, signal()]))) {
      messages.push(...batch.messages);
      if (batch.messages.some((m) => m.text === text)) return { messages, cursor: batch.cursor };
    }
  } finally {
    clearTimeout(bound);
    controller.abort();
    await writing;
  }
  throw new Error(`the receiver ended without reading ${JSON.stringify(text)}`);
}

export const CAPABILITY_CHECKS: readonly ContractCheck[] = [
  {
    name: "groups its capabilities: each present one has the members it names, alike on every account",
    run: async (h) => {
      for (const adapter of adapters(h)) {
        if (adapter.polls !== undefined) expect(typeof adapter.polls.send).toBe("function");
        if (adapter.typing !== undefined) {
          expect(typeof adapter.typing.show).toBe("function");
          if (adapter.typing.renewMs !== undefined) expect(Number.isInteger(adapter.typing.renewMs) && adapter.typing.renewMs >= 1_000).toBe(true);
        }
        if (adapter.inbound !== undefined) {
          const { webhook, receiver } = adapter.inbound;
          expect(webhook !== undefined || receiver !== undefined, "an inbound capability with neither a webhook nor a receiver").toBe(true);
          if (webhook !== undefined) expect(typeof webhook.handle).toBe("function");
          if (receiver !== undefined) expect(typeof receiver.receive).toBe("function");
        }
      }
      const [a, b] = h.accounts.map((account) => account.adapter);
      expect([a!.polls !== undefined, a!.typing !== undefined]).toEqual([b!.polls !== undefined, b!.typing !== undefined]);
    },
  },
  {
    name: "answers status under abort: the probe stops with an AbortError, statusOf with reachable: false",
    run: async (h) => {
      await expectAbortWhileWaiting(h, (s) => first(h).probe(s));
      h.fake.reset();
      h.fake.next({ kind: "delay", ms: 5_000 });
      const probe = await statusOf(first(h), AbortSignal.timeout(100));
      expect(probe.reachable).toBe(false);
      expectNoSecrets(h, probe.error ?? "");
    },
  },
  {
    name: "shows typing with a call to the platform, and stops at once with an AbortError when the signal fires",
    applies: (h) => first(h).typing !== undefined,
    run: async (h) => {
      const typing = first(h).typing!;
      const to = first(h).validateRecipient(h.recipient.to);
      await typing.show(to, undefined, signal(), h.typingReplyTo);
      expect(h.fake.requests.length, "showing typing made no call").toBeGreaterThan(0);
      if (typing.hide !== undefined) await typing.hide(to, undefined, signal());
      h.fake.reset();
      await expectAbortWhileWaiting(h, (s) => typing.show(to, undefined, s, h.typingReplyTo));
    },
  },
  {
    name: "parses a person's message from a verified webhook request, with the same eventId when it comes again",
    applies: (h) => h.inbound?.webhook !== undefined,
    run: async (h) => {
      const req = h.inbound!.webhook!.request(TEXT);
      const result = await handled(h, req);
      expect(result.reply.status, result.reply.body).toBeGreaterThanOrEqual(200);
      expect(result.reply.status).toBeLessThan(300);
      expect(result.messages).toHaveLength(1);
      expectPersonsMessage(h, result.messages[0], TEXT);
      const again = await handled(h, req);
      expect(again.messages.map((m) => m.eventId)).toEqual([result.messages[0]!.eventId]);
    },
  },
  {
    name: "refuses a forged webhook request (401/403) and a malformed one (4xx), with no messages and no throw",
    applies: (h) => h.inbound?.webhook !== undefined,
    run: async (h) => {
      const forged = await handled(h, h.inbound!.webhook!.forged(TEXT));
      expect([401, 403]).toContain(forged.reply.status);
      expect(forged.messages).toEqual([]);
      const malformed = await handled(h, h.inbound!.webhook!.malformed());
      expect(malformed.reply.status).toBeGreaterThanOrEqual(400);
      expect(malformed.reply.status).toBeLessThan(500);
      expect(malformed.messages).toEqual([]);
      expectNoSecrets(h, `${forged.reply.body ?? ""}\n${malformed.reply.body ?? ""}`);
    },
  },
  {
    name: "reads a person's message with its receiver, and resumes after the cursor without reading it again",
    applies: (h) => h.inbound?.receiver !== undefined,
    run: async (h) => {
      const r = h.inbound!.receiver!;
      const read = await readUntil(r, undefined, TEXT);
      expectPersonsMessage(h, read.messages.find((m) => m.text === TEXT), TEXT);
      const next = `${TEXT} again`;
      const resumed = await readUntil(r, read.cursor, next);
      expect(resumed.messages.map((m) => m.text)).not.toContain(TEXT);
      expectPersonsMessage(h, resumed.messages.find((m) => m.text === next), next);
    },
  },
  {
    name: "stops its receiver when the signal fires while it waits for messages",
    applies: (h) => h.inbound?.receiver !== undefined,
    run: async (h) => {
      const receiver = h.inbound!.receiver!.adapter.inbound!.receiver!;
      const controller = new AbortController();
      const reading = (async () => {
        for await (const batch of receiver.receive(undefined, controller.signal)) void batch;
      })();
      setTimeout(() => controller.abort(), 200);
      const outcome = await Promise.race([
        reading.then(
          () => "ended",
          (err: unknown) => ((err as Error).name === "AbortError" ? "ended" : err),
        ),
        new Promise((resolve) => setTimeout(() => resolve("still reading"), 5_000)),
      ]);
      expect(outcome).toBe("ended");
    },
  },
];
