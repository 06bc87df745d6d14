import { describe, expect, it } from "vitest";
import { type ChannelAdapter, receiptOf, sendPollVia, statusOf } from "./channel-adapter.js";
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
    probe: () => Promise.resolve({ reachable: true }),
  };
  const signal = new AbortController().signal;

  it("answers 'unsupported' for a channel without polls", async () => {
    const adapter: ChannelAdapter = { ...base, limits: { textChunk: 100 } };
    const err = await sendPollVia(adapter, poll, signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ChannelError);
    expect((err as ChannelError).kind).toBe("unsupported");
  });

  it("calls polls.send where the channel has polls", async () => {
    const adapter: ChannelAdapter = {
      ...base,
      limits: { textChunk: 100 },
      polls: { send: (p) => Promise.resolve(receiptOf([`poll:${p.question}`])) },
    };
    await expect(sendPollVia(adapter, poll, signal)).resolves.toEqual({ messageId: "poll:q?", messageIds: ["poll:q?"] });
  });
});

describe("statusOf", () => {
  const adapter = (probe: ChannelAdapter["probe"]): ChannelAdapter => ({
    limits: { textChunk: 100 },
    validateRecipient: (to) => to,
    send: () => Promise.resolve(receiptOf(["1"])),
    probe,
  });
  const open = () => new AbortController().signal;

  it("answers what the probe answered, a refusal included", async () => {
    expect(await statusOf(adapter(async () => ({ reachable: true, identity: "@bot" })), open())).toEqual({ reachable: true, identity: "@bot" });
    const refused = { reachable: false, identity: "+15550001111", error: "not registered" };
    expect(await statusOf(adapter(async () => refused), open())).toEqual(refused);
  });

  it("turns a probe that rejects, or throws at once, into reachable: false with its message", async () => {
    const rejects = adapter(() => Promise.reject(new ChannelError("unavailable", "platform down")));
    expect(await statusOf(rejects, open())).toEqual({ reachable: false, error: "platform down" });
    const throws = adapter(() => {
      throw new TypeError("a bug");
    });
    expect(await statusOf(throws, open())).toEqual({ reachable: false, error: "a bug" });
  });

  it("answers reachable: false once the signal fires, whatever the probe still waits for", async () => {
    const hangs = adapter(() => new Promise(() => undefined));
    const controller = new AbortController();
    const pending = statusOf(hangs, controller.signal);
    controller.abort(new Error("probe deadline passed"));
    expect(await pending).toEqual({ reachable: false, error: "probe deadline passed" });
    expect(await statusOf(hangs, AbortSignal.abort(new Error("already over")))).toEqual({ reachable: false, error: "already over" });
  });
});
