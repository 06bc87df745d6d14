import { blueBubblesNewMessage, blueBubblesTypingEvent } from "@gw/testing";
import { describe, expect, it } from "vitest";
import { rawRequest } from "../contract-helpers.js";
import { BlueBubblesWebhook } from "./inbound.js";

const PASSWORD = "bb-password";
const webhook = new BlueBubblesWebhook(PASSWORD);
const post = (payload: Record<string, unknown>, password: string | null = PASSWORD) =>
  webhook.handle(rawRequest({ headers: { "content-type": "application/json" }, body: JSON.stringify(payload) }, { query: password === null ? {} : { password } }));

describe("BlueBubbles webhooks", () => {
  it("takes new messages when the URL carries the server's password, and refuses others with 401", async () => {
    const ok = await post(blueBubblesNewMessage({ chatGuid: "iMessage;-;+15551234567", from: "+15551234567", text: "hi", guid: "G-1" }));
    expect(ok.reply.status).toBe(200);
    expect(ok.messages).toEqual([
      { eventId: "G-1", chat: "iMessage;-;+15551234567", sender: "+15551234567", chatType: "direct", mentioned: false, fromBot: false, text: "hi", sentAt: expect.any(Number) },
    ]);
    for (const password of [null, "wrong", ""]) {
      expect(await post(blueBubblesNewMessage({ chatGuid: "iMessage;-;+15551234567", from: "+15551234567", text: "hi" }), password)).toEqual({
        reply: expect.objectContaining({ status: 401 }),
        messages: [],
      });
    }
  });

  it("knows groups, lower-cases e-mail senders, marks the Mac's own messages and skips other events", async () => {
    const group = await post(blueBubblesNewMessage({ chatGuid: "iMessage;+;chat123", from: "Ada@Example.com", text: "hey all" }));
    expect(group.messages[0]).toMatchObject({ chatType: "group", sender: "ada@example.com", chat: "iMessage;+;chat123" });
    const mine = await post(blueBubblesNewMessage({ chatGuid: "iMessage;-;+15551234567", text: "the agent's answer" }));
    expect(mine.messages[0]?.fromBot).toBe(true);
    expect((await post(blueBubblesTypingEvent("iMessage;-;+15551234567"))).messages).toEqual([]);
    expect((await post({ nope: true })).reply.status).toBe(400);
  });
});
