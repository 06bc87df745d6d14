/**
 * The contract every channel plugin passes against its platform fake (test-only code; import
 * it as `@gw/channels/contract`). A plugin's test builds a harness: two accounts of one channel
 * wired to a fake from @gw/testing, plus what the platform should see; the suite then drives
 * the adapters only through the ChannelAdapter port.
 *
 * ```ts
 * describeChannelContract("telegram", async () => {
 *   const fake = await startFakeTelegram();
 *   const media = await startFakeMediaServer();
 *   return { fake, accounts: [...], recipient: { to: "-1001234567890", chat: "-1001234567890" }, ... ,
 *            close: async () => { await fake.close(); await media.close(); } };
 * });
 * ```
 */
import type { PlatformFake } from "@gw/testing";
import { afterAll, beforeAll, beforeEach, describe, it } from "vitest";
import type { ChannelAdapter } from "./channel-adapter.js";
import { type ContractCheck, SEND_CHECKS } from "./channel-checks.contract.js";
import { CAPABILITY_CHECKS } from "./capability-checks.contract.js";
import type { RawInbound } from "./inbound.js";

/** Every check of the contract: sending, then status under abort and the optional capabilities. */
export const CHANNEL_CONTRACT_CHECKS: readonly ContractCheck[] = [...SEND_CHECKS, ...CAPABILITY_CHECKS];

/** The fake's controls the suite uses (every @gw/testing platform fake has them). */
export type ContractFake = Pick<PlatformFake, "requests" | "delivered" | "tellsRetryAfter" | "dedupesOnClientKey" | "next" | "reset">;

export interface ContractAccount {
  adapter: ChannelAdapter;
  /** What the fake records as the sender (`FakeDelivery.account`) for this account. */
  identity: string;
}

export interface ExpectedRequest {
  method: string;
  path: string;
  /** Compared with `toMatchObject`: list the fields that matter. */
  body?: unknown;
}

/** An account with webhooks on, and requests as the platform (or a stranger) sends them. */
export interface WebhookHarness {
  adapter: ChannelAdapter;
  /** A person's `text`, as the platform posts it: signed, or carrying the account's secret. */
  request(text: string): RawInbound;
  /** The same without the right signature or secret. */
  forged(text: string): RawInbound;
  /** Correctly signed, but a body that is not the platform's request. */
  malformed(): RawInbound;
}

/** An account whose receiver reads from the fake, and how a person writes to it. */
export interface ReceiverHarness {
  adapter: ChannelAdapter;
  /** Has the platform hold a person's `text` for this account. */
  write(text: string): void | Promise<void>;
  /**
   * The platform delivers only to a connected receiver (a gateway): `write` is called while the
   * receiver starts reading, and waits for its connection itself.
   */
  live?: boolean;
}

export interface ChannelHarness {
  /** Two accounts of one channel, each with its own credentials, both talking to `fake`. */
  accounts: readonly [ContractAccount, ContractAccount];
  fake: ContractFake;
  /** A recipient the platform knows, as a user writes it, and the chat the fake records for it. */
  recipient: { to: string; chat: string };
  /** A thread (topic, thread_ts, thread channel, quoted message) in that chat. */
  threadId: string;
  /** Recipients `validateRecipient` must refuse. */
  invalidRecipients: readonly string[];
  /** Two media URLs the adapters can use, and their bytes (for platforms that take uploads). */
  media: { urls: readonly [string, string]; bytes: readonly [Uint8Array, Uint8Array] };
  /** The request the first account's plain text send to `recipient.to` must make. */
  expectedTextRequest(text: string): ExpectedRequest;
  /** Where the platform's inbound side delivers people's messages, when the plugin has one. */
  inbound?: {
    webhook?: WebhookHarness;
    receiver?: ReceiverHarness;
    /** The chat and sender a person's message must name (`InboundMessage.chat`, `.sender`). */
    from: { chat: string; sender: string };
  };
  /** The eventId typing hangs off, for platforms whose indicator needs one (WhatsApp). */
  typingReplyTo?: string;
  /** Every credential the adapters hold: none may appear in an error message. */
  secrets: readonly string[];
  close(): Promise<void>;
}

export function describeChannelContract(name: string, makeHarness: () => Promise<ChannelHarness>): void {
  describe(`channel contract: ${name}`, () => {
    let harness: ChannelHarness | undefined;
    beforeAll(async () => {
      harness = await makeHarness();
    });
    afterAll(async () => {
      await harness?.close();
    });
    beforeEach(() => {
      harness?.fake.reset();
    });
    for (const check of CHANNEL_CONTRACT_CHECKS) {
      it(check.name, async (ctx) => {
        const h = harness!;
        if (check.applies !== undefined && !check.applies(h)) {
          ctx.skip();
          return;
        }
        await check.run(h);
      });
    }
  });
}

export type { ContractCheck } from "./channel-checks.contract.js";
