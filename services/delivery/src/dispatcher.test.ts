import { type ChannelAdapter, ChannelError, type OutboundMessage, type OutboundPoll, receiptOf } from "@gw/channels";
import { parseConfig } from "@gw/config";
import type { DeliverySendRequest } from "@gw/contracts";
import { createMemoryFastStore, type FastStore } from "@gw/store";
import { describe, expect, it } from "vitest";
import { ChannelDirectory } from "./channel-directory.js";
import { type ChannelPlugin, pluginTable } from "./channels/registry.js";
import { Dispatcher } from "./dispatcher.js";
import { IdempotentRunner } from "./idempotency.js";
import { Pacer } from "./pacer.js";
import { StatusBook } from "./status-book.js";

/** A platform in memory: records calls, fails as scripted, validates digits-only recipients. */
class ScriptedAdapter implements ChannelAdapter {
  readonly limits = { textChunk: 20, polls: true, mediaPerMessage: 2 };
  readonly sent: Array<OutboundMessage | OutboundPoll> = [];
  /** One step per call, in order; no step left: the call succeeds. */
  readonly script: Array<ChannelError | "hang" | "ok"> = [];
  private next = 1;

  validateRecipient(to: string): string {
    if (!/^\d+$/.test(to.trim())) throw new ChannelError("recipient", `"${to}" is not a chat id`);
    return to.trim();
  }

  private async call(msg: OutboundMessage | OutboundPoll, signal: AbortSignal) {
    const step = this.script.shift();
    if (step === "hang") {
      await new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true }));
    }
    if (step instanceof ChannelError) throw step;
    this.sent.push(msg);
    return receiptOf([`m${this.next++}`]);
  }

  send(msg: OutboundMessage, signal: AbortSignal) {
    return this.call(msg, signal);
  }

  sendPoll(poll: OutboundPoll, signal: AbortSignal) {
    return this.call(poll, signal);
  }

  async status() {
    return { reachable: true };
  }
}

function setup(opts: { store?: FastStore; polls?: boolean; sendTimeoutMs?: number } = {}) {
  const adapter = new ScriptedAdapter();
  if (opts.polls === false) Object.assign(adapter.limits, { polls: false });
  const plugin: ChannelPlugin = { kind: "telegram", create: () => adapter };
  const config = parseConfig(
    `{ channels: { default: "tg", tg: { kind: "telegram", botToken: "t0k" }, other: { kind: "telegram", botToken: "t1k" } } }`,
    { env: {} },
  );
  const directory = ChannelDirectory.build(config.channels, pluginTable([plugin]), () => {
    throw new Error("no HTTP in this test");
  });
  const store = opts.store ?? createMemoryFastStore();
  const dispatcher = new Dispatcher({
    directory,
    store,
    idempotency: new IdempotentRunner(store, { windowMs: 60_000, claimTtlMs: 10_000, pollMs: 5 }),
    pacer: new Pacer(store),
    status: new StatusBook(store),
    maxAttempts: 3,
    callTimeoutMs: 200,
    sendTimeoutMs: opts.sendTimeoutMs ?? 5_000,
    windowMs: 60_000,
    media: { allowHosts: [], allowPrivateNetworks: false },
    backoff: { baseMs: 10, capMs: 20 },
  });
  return { adapter, dispatcher, store };
}

const request = (over: Partial<DeliverySendRequest> = {}): DeliverySendRequest => ({
  channel: "",
  to: "42",
  text: "hello",
  mediaUrls: [],
  gifPlayback: false,
  accountId: "",
  threadId: "",
  sessionKey: "",
  idempotencyKey: `k-${Math.random()}`,
  ...over,
});

describe("Dispatcher", () => {
  it("resolves the channel: explicit, then the session key's prefix, then the default", async () => {
    const { dispatcher } = setup();
    expect((await dispatcher.send(request({ channel: "other" }))).channel).toBe("other");
    expect((await dispatcher.send(request({ sessionKey: "other:42" }))).channel).toBe("other");
    expect((await dispatcher.send(request({ sessionKey: "user:42" }))).channel).toBe("tg");
    await expect(dispatcher.send(request({ channel: "nope" }))).rejects.toMatchObject({ code: "CHANNEL_NOT_FOUND" });
    await expect(dispatcher.send(request({ accountId: "nope" }))).rejects.toMatchObject({ code: "CHANNEL_NOT_FOUND" });
  });

  it("takes the recipient from a channel session key when `to` is empty", async () => {
    const { dispatcher, adapter } = setup();
    const receipt = await dispatcher.send(request({ to: "", sessionKey: "other:777" }));
    expect(receipt).toMatchObject({ channel: "other", to: "777" });
    expect(adapter.sent[0]).toMatchObject({ to: "777" });
    await expect(dispatcher.send(request({ to: "", sessionKey: "user:777" }))).rejects.toMatchObject({
      code: "INVALID_REQUEST",
    });
  });

  it("refuses a bad recipient and a private media URL before any platform call", async () => {
    const { dispatcher, adapter } = setup();
    await expect(dispatcher.send(request({ to: "@nobody" }))).rejects.toMatchObject({
      code: "INVALID_REQUEST",
      message: expect.stringMatching(/^to: /),
    });
    await expect(dispatcher.send(request({ mediaUrls: ["http://127.0.0.1/x.png"] }))).rejects.toMatchObject({
      code: "INVALID_REQUEST",
      message: expect.stringMatching(/^mediaUrls\[0\]/),
    });
    expect(adapter.sent).toEqual([]);
  });

  it("splits long text and media into ordered parts and names every part's id", async () => {
    const { dispatcher, adapter } = setup();
    const receipt = await dispatcher.send(
      request({
        text: "First sentence here. Second one follows.",
        mediaUrls: ["https://a.example/1.png", "https://a.example/2.png", "https://a.example/3.png"],
      }),
    );
    expect(adapter.sent.map((m) => ("text" in m ? m.text : undefined) ?? (m as OutboundMessage).mediaUrls.length)).toEqual([
      "First sentence here.",
      "Second one follows.",
      2,
      1,
    ]);
    expect(receipt.messageIds).toEqual(["m1", "m2", "m3", "m4"]);
    expect(receipt.messageId).toBe("m1");
  });

  it("retries 5xx and 429 (after retry_after), not a permanent refusal", async () => {
    const { dispatcher, adapter } = setup();
    adapter.script.push(
      new ChannelError("unavailable", "502 bad gateway"),
      new ChannelError("rate_limited", "too many requests", { retryAfterMs: 150 }),
    );
    const started = Date.now();
    expect((await dispatcher.send(request())).messageIds).toHaveLength(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    adapter.script.push(new ChannelError("rejected", "Bad Request: chat not found", { status: 400 }));
    await expect(dispatcher.send(request())).rejects.toMatchObject({
      code: "DELIVERY_FAILED",
      message: expect.stringContaining("chat not found"),
    });
    expect(adapter.sent).toHaveLength(1);
  });

  it("gives up after maxAttempts and does not cache the failure", async () => {
    const { dispatcher, adapter } = setup();
    const down = () => new ChannelError("unavailable", "503");
    adapter.script.push(down(), down(), down());
    const req = request();
    await expect(dispatcher.send(req)).rejects.toMatchObject({
      code: "DELIVERY_FAILED",
      message: expect.stringContaining("after 3 attempts"),
    });
    const retry = await dispatcher.send(req);
    expect(retry.cached).toBe(false);
    expect(adapter.sent).toHaveLength(1);
  });

  it("after a partial failure, a retry sends only the missing parts", async () => {
    const { dispatcher, adapter } = setup();
    const req = request({ text: "Part one is here. Part two is here." });
    // The first part goes out; the second times out on every attempt.
    adapter.script.push("ok", "hang", "hang", "hang");
    await expect(dispatcher.send(req)).rejects.toMatchObject({ code: "DELIVERY_FAILED" });
    expect(adapter.sent.map((m) => (m as OutboundMessage).text)).toEqual(["Part one is here."]);
    const again = await dispatcher.send(req);
    expect(adapter.sent.map((m) => (m as OutboundMessage).text)).toEqual(["Part one is here.", "Part two is here."]);
    expect(again.messageIds).toEqual(["m1", "m2"]);
  });

  it("answers a repeated key from the first result, and refuses it for another message", async () => {
    const { dispatcher, adapter } = setup();
    const req = request();
    const first = await dispatcher.send(req);
    const again = await dispatcher.send(req);
    expect(again).toEqual({ ...first, cached: true });
    expect(adapter.sent).toHaveLength(1);
    await expect(dispatcher.send({ ...req, text: "something else" })).rejects.toMatchObject({ code: "CONFLICT" });
  });

  it("sends polls, and refuses them on a channel without polls", async () => {
    const { dispatcher, adapter } = setup();
    const poll = {
      channel: "",
      to: "42",
      question: "Lunch?",
      options: ["yes", "no"],
      allowMultipleAnswers: false,
      anonymous: true,
      accountId: "",
      threadId: "",
      sessionKey: "",
      idempotencyKey: "poll-1",
    };
    expect((await dispatcher.poll(poll)).messageIds).toEqual(["m1"]);
    expect(adapter.sent[0]).toMatchObject({ question: "Lunch?", anonymous: true });
    const noPolls = setup({ polls: false });
    await expect(noPolls.dispatcher.poll(poll)).rejects.toMatchObject({ code: "NOT_SUPPORTED" });
  });
});
