/**
 * What the channel contract's checks share: bounded calls, the messages they send, and the
 * expectations several of them make.
 */
import { expect } from "vitest";
import type { ChannelAdapter, DeliveryReceipt, OutboundMessage, OutboundPoll } from "./channel-adapter.js";
import { ChannelError, type ChannelErrorKind } from "./channel-error.js";
import type { ChannelHarness } from "./channel.contract.js";

/** Fits every platform's error form (Slack error codes included) and is easy to find in a message. */
export const CONTRACT_REJECTION_REASON = "contract_rejection_reason";
export const TEXT = "Hello from the channel contract suite";
/** Bounds every call, so a hanging adapter fails its check instead of the whole run. */
export const CALL_BOUND_MS = 15_000;

export const signal = () => AbortSignal.timeout(CALL_BOUND_MS);
let keys = 0;
export const key = (what: string) => `contract-${what}-${process.pid}-${++keys}`;

export function message(h: ChannelHarness, adapter: ChannelAdapter, extra: Partial<OutboundMessage> = {}): OutboundMessage {
  return {
    to: adapter.validateRecipient(h.recipient.to),
    text: TEXT,
    mediaUrls: [],
    gifPlayback: false,
    idempotencyKey: key("send"),
    ...extra,
  };
}

export function poll(h: ChannelHarness, adapter: ChannelAdapter, extra: Partial<OutboundPoll> = {}): OutboundPoll {
  return {
    to: adapter.validateRecipient(h.recipient.to),
    question: "Which option do you prefer",
    options: ["first", "second", "third"],
    allowMultipleAnswers: true,
    anonymous: false,
    idempotencyKey: key("poll"),
    ...extra,
  };
}

export const first = (h: ChannelHarness) => h.accounts[0].adapter;

/** Runs `call` and expects a ChannelError of `kind`; a port method must reject, not throw. */
export async function channelError(call: () => Promise<unknown>, kind: ChannelErrorKind): Promise<ChannelError> {
  let pending: Promise<unknown>;
  try {
    pending = call();
  } catch (err) {
    throw new Error(`expected a rejected promise, but the call threw at once: ${String(err)}`, { cause: err });
  }
  let caught: unknown;
  try {
    await pending;
  } catch (err) {
    caught = err;
  }
  expect(caught, `expected a ChannelError of kind "${kind}"`).toBeInstanceOf(ChannelError);
  const err = caught as ChannelError;
  expect(err.kind, err.message).toBe(kind);
  return err;
}

/** The message and every cause's message: what a log line of the error would show. */
export function errorTexts(err: unknown): string {
  const texts: string[] = [];
  let current: unknown = err;
  for (let depth = 0; current !== undefined && current !== null && depth < 8; depth++) {
    texts.push(current instanceof Error ? `${current.name}: ${current.message}` : String(current));
    current = current instanceof Error ? current.cause : undefined;
  }
  return texts.join("\n");
}

export function expectNoSecrets(h: ChannelHarness, text: string): void {
  for (const secret of h.secrets) expect(text.includes(secret), `a credential leaked into: ${text}`).toBe(false);
}

/** The receipt names exactly the messages the platform stored, in order. */
export function expectReceiptMatches(h: ChannelHarness, receipt: DeliveryReceipt): void {
  expect(receipt.messageIds.length).toBeGreaterThan(0);
  expect(receipt.messageId).toBe(receipt.messageIds[0]);
  expect(receipt.messageIds).toEqual(h.fake.delivered.map((d) => d.id));
}

function sameBytes(a: Uint8Array | undefined, b: Uint8Array): boolean {
  return a !== undefined && a.length === b.length && a.every((byte, i) => byte === b[i]);
}

/** Each delivered medium is the URL the adapter was given, or that URL's bytes uploaded. */
export function expectMedia(h: ChannelHarness, indexes: number[]): void {
  const media = h.fake.delivered.flatMap((d) => d.media);
  expect(media).toHaveLength(indexes.length);
  media.forEach((m, i) => {
    const index = indexes[i]!;
    const matches = m.url === h.media.urls[index] || sameBytes(m.data, h.media.bytes[index]!);
    expect(matches, `medium ${i} is neither ${h.media.urls[index]} nor its bytes`).toBe(true);
  });
}

/** Runs `call` with a signal that fires while the platform holds its answer back; expects an AbortError. */
export async function expectAbortWhileWaiting(h: ChannelHarness, call: (signal: AbortSignal) => Promise<unknown>): Promise<void> {
  // Long enough that only the abort can end the call first.
  h.fake.next({ kind: "delay", ms: 2_000 });
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 100);
  const outcome = await call(controller.signal).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(outcome, "the call should have been aborted").toBeInstanceOf(Error);
  expect((outcome as Error).name).toBe("AbortError");
}
