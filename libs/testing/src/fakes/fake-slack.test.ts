import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_SLACK_BOTS, type FakeSlack, startFakeSlack } from "./fake-slack.js";

const [one, two] = DEFAULT_SLACK_BOTS;

describe("fake Slack Web API", () => {
  let slack: FakeSlack;
  const call = async (method: string, params: Record<string, unknown>, token: string | null = one!.token) => {
    const headers: Record<string, string> = { "content-type": "application/json; charset=utf-8" };
    if (token !== null) headers.authorization = `Bearer ${token}`;
    const res = await fetch(`${slack.baseUrl}/${method}`, { method: "POST", headers, body: JSON.stringify(params) });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
  };
  beforeAll(async () => {
    slack = await startFakeSlack();
  });
  afterAll(() => slack.close());
  beforeEach(() => slack.reset());

  it("serves the API under /api", () => {
    expect(slack.baseUrl).toMatch(/\/api$/);
  });

  it("answers auth.test for the token's bot", async () => {
    expect((await call("auth.test", {}, two!.token)).body).toMatchObject({ ok: true, user_id: "U0BOTTWO", bot_id: "B0BOTTWO", team_id: "T0FAKE" });
  });

  it("posts into a thread, with image blocks as media", async () => {
    const { body } = await call("chat.postMessage", {
      channel: "C0FAKE0001",
      text: "hello",
      thread_ts: "1700000000.000001",
      blocks: [{ type: "section", text: { type: "mrkdwn", text: "hello" } }, { type: "image", image_url: "https://cdn.example/a.png", alt_text: "a" }],
    });
    expect(body).toMatchObject({ ok: true, channel: "C0FAKE0001", message: { text: "hello", user: "U0BOTONE", thread_ts: "1700000000.000001" } });
    expect(slack.delivered).toEqual([
      { id: body.ts, account: "U0BOTONE", chat: "C0FAKE0001", text: "hello", media: [{ url: "https://cdn.example/a.png", kind: "image" }], threadId: "1700000000.000001" },
    ]);
    expect(slack.requests[0]!.headers.authorization).toBe(`Bearer ${one!.token}`);
  });

  it("records links in mrkdwn sections as media, in block order, but not in plain_text", async () => {
    await call("chat.postMessage", {
      channel: "C0FAKE0001",
      text: "files",
      blocks: [
        { type: "section", text: { type: "mrkdwn", text: "<https://cdn.example/r.pdf?a=1&amp;b=2|r.pdf>" } },
        { type: "image", image_url: "https://cdn.example/a.png", alt_text: "a" },
        { type: "section", text: { type: "plain_text", text: "<https://cdn.example/not-a-link>" } },
      ],
    });
    expect(slack.delivered[0]!.media).toEqual([
      { url: "https://cdn.example/r.pdf?a=1&b=2", kind: "link" },
      { url: "https://cdn.example/a.png", kind: "image" },
    ]);
  });

  it("gives every message its own increasing ts", async () => {
    const a = (await call("chat.postMessage", { channel: "C0FAKE0001", text: "a" })).body.ts as string;
    const b = (await call("chat.postMessage", { channel: "C0FAKE0001", text: "b" })).body.ts as string;
    expect(Number(b)).toBeGreaterThan(Number(a));
  });

  it("opens a DM with a user and posts to a user id directly", async () => {
    expect((await call("conversations.open", { users: "U0FAKEUSER" })).body).toEqual({ ok: true, channel: { id: "D0FAKEUSER" } });
    await call("chat.postMessage", { channel: "U0FAKEUSER", text: "psst" });
    expect(slack.delivered[0]!.chat).toBe("D0FAKEUSER");
  });

  it("refuses with HTTP 200 and Slack's error codes", async () => {
    expect(await call("chat.postMessage", { channel: "C404", text: "x" })).toMatchObject({ status: 200, body: { ok: false, error: "channel_not_found" } });
    expect((await call("chat.postMessage", { channel: "C0FAKE0002", text: "x" })).body.error).toBe("not_in_channel");
    expect((await call("chat.postMessage", { channel: "C0FAKE0001" })).body.error).toBe("no_text");
    expect((await call("chat.postMessage", { channel: "C0FAKE0001", text: "x".repeat(40_001) })).body.error).toBe("msg_too_long");
    expect((await call("chat.postMessage", { channel: "C0FAKE0001", blocks: [{ type: "image" }] })).body.error).toBe("invalid_blocks");
    expect((await call("chat.postMessage", { channel: "C0FAKE0001", text: "x" }, "xoxb-wrong")).body.error).toBe("invalid_auth");
    expect((await call("chat.postMessage", { channel: "C0FAKE0001", text: "x" }, null)).body.error).toBe("not_authed");
    expect(slack.delivered).toHaveLength(0);
  });

  it("accepts a form post with the token as a field, and warns about JSON without a charset", async () => {
    await fetch(`${slack.baseUrl}/chat.postMessage`, { method: "POST", body: new URLSearchParams({ token: one!.token, channel: "#general", text: "form" }) });
    expect(slack.delivered[0]).toMatchObject({ chat: "C0FAKE0001", text: "form" });
    const res = await fetch(`${slack.baseUrl}/chat.postMessage`, {
      method: "POST",
      headers: { authorization: `Bearer ${one!.token}`, "content-type": "application/json" },
      body: JSON.stringify({ channel: "C0FAKE0001", text: "x" }),
    });
    expect(await res.json()).toMatchObject({ ok: true, response_metadata: { warnings: ["missing_charset"] } });
  });

  it("scripts Slack's failure forms", async () => {
    slack.next({ kind: "reject", reason: "is_archived" });
    slack.next({ kind: "rate_limit", retryAfterSeconds: 30 });
    expect(await call("chat.postMessage", { channel: "C0FAKE0001", text: "x" })).toMatchObject({ status: 200, body: { ok: false, error: "is_archived" } });
    const limited = await call("chat.postMessage", { channel: "C0FAKE0001", text: "x" });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("30");
    expect(limited.body).toEqual({ ok: false, error: "ratelimited" });
  });
});
