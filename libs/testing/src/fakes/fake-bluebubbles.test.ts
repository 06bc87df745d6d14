import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_BLUEBUBBLES_SERVERS, type FakeBlueBubbles, startFakeBlueBubbles } from "./fake-bluebubbles.js";

const [one, two] = DEFAULT_BLUEBUBBLES_SERVERS;
const chat = "iMessage;-;+15557654321";

describe("fake BlueBubbles server", () => {
  let bb: FakeBlueBubbles;
  const sendText = async (body: Record<string, unknown>, password = one!.password) => {
    const res = await fetch(`${bb.baseUrl}/api/v1/message/text?password=${encodeURIComponent(password)}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  beforeAll(async () => {
    bb = await startFakeBlueBubbles({ sendDelayMs: 50 });
  });
  afterAll(() => bb.close());
  beforeEach(() => bb.reset());

  it("answers server info and ping behind the password", async () => {
    const info = await fetch(`${bb.baseUrl}/api/v1/server/info?password=${two!.password}`);
    expect(await info.json()).toMatchObject({ status: 200, message: "Success", data: { computer_id: "fake-mac-two", private_api: true } });
    const denied = await fetch(`${bb.baseUrl}/api/v1/ping?password=wrong`);
    expect(denied.status).toBe(401);
    expect(await denied.json()).toEqual({ status: 401, message: "You are not authorized to access this resource", error: { type: "Authentication Error", message: "Unauthorized" } });
  });

  it("sends text, echoing the tempGuid, and records the reply anchor", async () => {
    const { status, body } = await sendText({ chatGuid: chat, tempGuid: "t-1", message: "hi", method: "private-api", selectedMessageGuid: "PREV-GUID" });
    expect(status).toBe(200);
    expect(body).toMatchObject({ status: 200, message: "Message sent!", data: { text: "hi", tempGuid: "t-1", isFromMe: true, threadOriginatorGuid: "PREV-GUID", chats: [{ guid: chat }] } });
    const guid = (body.data as { guid: string }).guid;
    expect(bb.delivered).toEqual([{ id: guid, account: "mac-one", chat, text: "hi", media: [], threadId: "PREV-GUID", clientKey: "t-1" }]);
  });

  it("answers a repeated tempGuid with the first message, once sent", async () => {
    const first = await sendText({ chatGuid: chat, tempGuid: "t-2", message: "once" });
    const again = await sendText({ chatGuid: chat, tempGuid: "t-2", message: "once" });
    expect((again.body.data as { guid: string }).guid).toBe((first.body.data as { guid: string }).guid);
    expect(bb.delivered).toHaveLength(1);
  });

  it("refuses a tempGuid that is still being sent, as the real server does", async () => {
    const [a, b] = await Promise.all([
      sendText({ chatGuid: chat, tempGuid: "t-3", message: "x" }),
      new Promise((resolve) => setTimeout(resolve, 10)).then(() => sendText({ chatGuid: chat, tempGuid: "t-3", message: "x" })),
    ]);
    expect(a.status).toBe(200);
    expect(b).toMatchObject({ status: 400, body: { error: { type: "Validation Error", message: "Message is already queued to be sent! (Temp GUID: t-3)" } } });
    expect(bb.delivered).toHaveLength(1);
  });

  it("sends an uploaded attachment", async () => {
    const form = new FormData();
    form.set("chatGuid", chat);
    form.set("tempGuid", "t-4");
    form.set("name", "photo.png");
    form.set("attachment", new Blob([new Uint8Array([9, 9])], { type: "image/png" }), "photo.png");
    const res = await fetch(`${bb.baseUrl}/api/v1/message/attachment?password=${one!.password}`, { method: "POST", body: form });
    expect(await res.json()).toMatchObject({ status: 200, message: "Attachment sent!", data: { attachments: [{ transferName: "photo.png", totalBytes: 2 }] } });
    expect(bb.delivered[0]).toMatchObject({ chat, media: [{ data: new Uint8Array([9, 9]), filename: "photo.png" }], clientKey: "t-4" });
  });

  it("validates like the server", async () => {
    expect((await sendText({ message: "x", tempGuid: "a" })).body.error).toEqual({ type: "Validation Error", message: "The chatGuid field is required." });
    expect((await sendText({ chatGuid: chat, message: "x" })).body.error).toMatchObject({ message: "A 'tempGuid' is required when sending via AppleScript" });
    expect((await sendText({ chatGuid: chat, tempGuid: "b", message: "" })).body.error).toMatchObject({ message: "A 'message' is required when sending via AppleScript" });
    expect(await sendText({ chatGuid: "nonsense", tempGuid: "c", message: "x" })).toMatchObject({ status: 500, body: { error: { type: "iMessage Error" } } });
    expect(bb.delivered).toHaveLength(0);
  });

  it("scripts failures, including a proxy's 429", async () => {
    bb.next({ kind: "rate_limit", retryAfterSeconds: 6 });
    bb.next({ kind: "reject", reason: "nope" });
    const limited = await fetch(`${bb.baseUrl}/api/v1/ping?password=${one!.password}`);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("6");
    expect((await sendText({ chatGuid: chat, tempGuid: "d", message: "x" })).body).toMatchObject({ status: 400, error: { message: "nope" } });
  });
});
