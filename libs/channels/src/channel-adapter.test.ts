import { describe, expect, it } from "vitest";
import { type ChannelAdapter, receiptOf, sendPollVia } from "./channel-adapter.js";
import { ChannelError, isChannelError } from "./channel-error.js";

describe("ChannelError", () => {
  it("is retryable exactly for rate limits and unavailability", () => {
    expect(new ChannelError("rate_limited", "slow down").retryable).toBe(true);
    expect(new ChannelError("unavailable", "down").retryable).toBe(true);
    for (const kind of ["recipient", "rejected", "unsupported"] as const) {
      expect(new ChannelError(kind, "no").retryable).toBe(false);
    }
  });

  it("keeps the platform's status, code, wait and cause", () => {
    const cause = new Error("socket hang up");
    const err = new ChannelError("rate_limited", "telegram: Too Many Requests", {
      status: 429,
      platformCode: "429",
      retryAfterMs: 3000,
      cause,
    });
    expect(err).toMatchObject({ name: "ChannelError", kind: "rate_limited", status: 429, platformCode: "429", retryAfterMs: 3000 });
    expect(err.cause).toBe(cause);
    expect(isChannelError(err)).toBe(true);
    expect(isChannelError(new Error("x"))).toBe(false);
  });

  it("refuses a wait or a scope on anything but a rate limit, and a negative wait", () => {
    expect(() => new ChannelError("unavailable", "x", { retryAfterMs: 5 })).toThrow(/belongs to rate_limited/);
    expect(() => new ChannelError("rejected", "x", { rateLimitScope: "account" })).toThrow(/belongs to rate_limited/);
    expect(new ChannelError("rate_limited", "x", { rateLimitScope: "account" }).rateLimitScope).toBe("account");
    expect(new ChannelError("rate_limited", "x").rateLimitScope).toBeUndefined();
    expect(() => new ChannelError("rate_limited", "x", { retryAfterMs: -1 })).toThrow(/non-negative/);
  });
});

describe("receiptOf", () => {
  it("answers the first id as messageId and keeps the order", () => {
    expect(receiptOf(["3", "1", "2"])).toEqual({ messageId: "3", messageIds: ["3", "1", "2"] });
    expect(() => receiptOf([])).toThrow(/at least one/);
  });
});

describe("sendPollVia", () => {
  const poll = { to: "x", question: "q?", options: ["a", "b"], allowMultipleAnswers: false, anonymous: false, idempotencyKey: "k" };
  const base = {
    validateRecipient: (to: string) => to,
    send: () => Promise.resolve(receiptOf(["1"])),
    status: () => Promise.resolve({ reachable: true }),
  };
  const signal = new AbortController().signal;

  it("answers 'unsupported' for a channel without polls", async () => {
    const adapter: ChannelAdapter = { ...base, limits: { textChunk: 100, polls: false } };
    const err = await sendPollVia(adapter, poll, signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ChannelError);
    expect((err as ChannelError).kind).toBe("unsupported");
  });

  it("calls sendPoll where the channel has polls", async () => {
    const adapter: ChannelAdapter = {
      ...base,
      limits: { textChunk: 100, polls: true },
      sendPoll: (p) => Promise.resolve(receiptOf([`poll:${p.question}`])),
    };
    await expect(sendPollVia(adapter, poll, signal)).resolves.toEqual({ messageId: "poll:q?", messageIds: ["poll:q?"] });
  });
});
