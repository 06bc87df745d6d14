import { ChannelError, type OutboundMessage } from "@gw/channels";
import type { DeliverySendRequest } from "@gw/contracts";
import { describe, expect, it } from "vitest";
import { setup } from "../../test/scripted-channel.js";

const request = (over: Partial<DeliverySendRequest> = {}): DeliverySendRequest => ({
  to: "42",
  text: "hello",
  mediaUrls: [],
  gifPlayback: false,
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

  it("reads the \"\" an older edge sends for a field it did not give as absent", async () => {
    const { dispatcher, adapter } = setup();
    const receipt = await dispatcher.send(request({ channel: "", accountId: "", threadId: "", sessionKey: "" }));
    expect(receipt.channel).toBe("tg");
    expect(adapter.sent[0]?.threadId).toBeUndefined();
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
