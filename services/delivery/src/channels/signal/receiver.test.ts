import { randomBytes } from "node:crypto";
import { type ChannelAdapter, ChannelError, type ReceivedBatch } from "@gw/channels";
import { type FakeSignal, startFakeSignal } from "@gw/testing";
import { afterEach, describe, expect, it } from "vitest";
import { type TestHttp, testHttp } from "../contract-helpers.js";
import { signalPlugin } from "./plugin.js";
import { SignalSettingsSchema } from "./settings.js";

const NUMBER = "+15550001111";
const PERSON = "+15557654321";
const INTERNAL_GROUP = randomBytes(32).toString("base64");

describe("signal receiver", () => {
  let fake: FakeSignal | undefined;
  let http: TestHttp | undefined;
  afterEach(async () => {
    await http?.close();
    await fake?.close();
  });

  async function adapter(mode: "native" | "json-rpc" = "native", inbound?: "off"): Promise<ChannelAdapter> {
    fake = await startFakeSignal({ mode });
    http = testHttp({ secrets: [] });
    return signalPlugin.create({
      channelId: "signal",
      accountId: "default",
      settings: SignalSettingsSchema.parse({ bridgeUrl: fake.baseUrl, number: NUMBER, ...(inbound ? { inbound } : {}) }),
      http: http.factory,
    });
  }

  async function firstBatch(a: ChannelAdapter): Promise<ReceivedBatch> {
    const controller = new AbortController();
    for await (const batch of a.inbound!.receiver!.receive(undefined, controller.signal)) {
      controller.abort();
      return batch;
    }
    throw new Error("no batch");
  }

  it("has a receiver unless inbound is off", async () => {
    expect((await adapter("native", "off")).inbound?.receiver).toBeUndefined();
    await fake!.close();
    await http!.close();
    expect((await adapter()).inbound?.receiver).toBeDefined();
  });

  it("reads direct and group messages, mentions and replies to the account, and drops its own", async () => {
    const a = await adapter();
    const direct = fake!.userWrites({ from: PERSON, fromName: "Pat", text: "hello bot" });
    fake!.userWrites({ from: PERSON, groupId: INTERNAL_GROUP, text: "chatting among us" });
    fake!.userWrites({ from: PERSON, groupId: INTERNAL_GROUP, text: "what's the time?", mentions: [NUMBER] });
    fake!.userWrites({ from: PERSON, groupId: INTERNAL_GROUP, text: "thanks", quotesAccount: true });
    fake!.userWrites({ from: NUMBER, text: "sent from the linked phone" });
    const batch = await firstBatch(a);
    const group = `group.${Buffer.from(INTERNAL_GROUP).toString("base64")}`;
    expect(batch.messages.map(({ chat, chatType, mentioned, text }) => ({ chat, chatType, mentioned, text }))).toEqual([
      { chat: PERSON, chatType: "direct", mentioned: false, text: "hello bot" },
      { chat: group, chatType: "group", mentioned: false, text: "chatting among us" },
      { chat: group, chatType: "group", mentioned: true, text: "what's the time?" },
      { chat: group, chatType: "group", mentioned: true, text: "thanks" },
    ]);
    expect(batch.messages[0]).toMatchObject({ eventId: `${direct.timestamp}:${PERSON}`, sender: PERSON, senderName: "Pat", fromBot: false, sentAt: direct.timestamp });
    // The group form is what send takes back.
    expect(a.validateRecipient(group)).toBe(group);
    expect(fake!.requests.find((r) => r.path.startsWith("/v1/receive/"))!.query).toEqual({ timeout: "10" });
  });

  it("waits on the bridge until a message comes", async () => {
    const a = await adapter();
    const pending = firstBatch(a);
    await new Promise((r) => setTimeout(r, 300));
    expect(fake!.receiveStats.active).toBe(1);
    fake!.userWrites({ from: PERSON, text: "late" });
    expect((await pending).messages[0]!.text).toBe("late");
  });

  it("refuses a bridge in json-rpc mode, saying how to fix it", async () => {
    const a = await adapter("json-rpc");
    const err = await firstBatch(a).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ChannelError);
    expect((err as ChannelError).message).toContain("MODE=native");
  });

  it("shows typing to a person or a group, and hides it", async () => {
    const a = await adapter();
    const group = `group.${Buffer.from(INTERNAL_GROUP).toString("base64")}`;
    await a.typing!.show(PERSON, undefined, AbortSignal.timeout(5_000));
    await a.typing!.show(group, undefined, AbortSignal.timeout(5_000));
    await a.typing!.hide!(PERSON, undefined, AbortSignal.timeout(5_000));
    expect(fake!.typing).toEqual([
      { method: "PUT", account: NUMBER, recipient: PERSON },
      { method: "PUT", account: NUMBER, recipient: group },
      { method: "DELETE", account: NUMBER, recipient: PERSON },
    ]);
  });
});
