import { type ChannelAdapter, ChannelError, type OutboundMessage, statusOf } from "@gw/channels";
import { DEFAULT_SLACK_BOTS, type FakeSlack, startFakeSlack } from "@gw/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type TestHttp, testHttp } from "../contract-helpers.js";
import { SECTION_TEXT_MAX } from "./message.js";
import { slackPlugin } from "./plugin.js";
import { SlackSettingsSchema } from "./settings.js";

const [bot] = DEFAULT_SLACK_BOTS;
const CDN = "https://cdn.example/media";

describe("slack plugin", () => {
  let slack: FakeSlack;
  let http: TestHttp;
  let adapter: ChannelAdapter;

  const message = (extra: Partial<OutboundMessage>): OutboundMessage => ({
    to: "C0FAKE0001",
    mediaUrls: [],
    gifPlayback: false,
    idempotencyKey: "k",
    ...extra,
  });
  const signal = () => AbortSignal.timeout(10_000);
  const bodies = () => slack.requests.map((r) => r.body as Record<string, unknown>);
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => expect.fail("expected a ChannelError"),
      (err: unknown) => {
        expect(err).toBeInstanceOf(ChannelError);
        return err as ChannelError;
      },
    );
  const answer = (json: unknown) => ({ kind: "raw" as const, status: 200, headers: { "content-type": "application/json" }, body: JSON.stringify(json) });

  beforeAll(async () => {
    slack = await startFakeSlack();
    http = testHttp({ secrets: [bot!.token] });
    adapter = slackPlugin.create({
      channelId: "slack",
      accountId: "default",
      settings: SlackSettingsSchema.parse({ botToken: bot!.token, apiBaseUrl: slack.baseUrl }),
      http: http.factory,
    });
  });
  afterAll(async () => {
    await http.close();
    await slack.close();
  });
  beforeEach(() => slack.reset());

  it("posts JSON with a charset and the bot token as a Bearer header", async () => {
    await adapter.send(message({ text: "hi" }), signal());
    const [req] = slack.requests;
    expect(req).toMatchObject({ method: "POST", path: "/api/chat.postMessage", body: { channel: "C0FAKE0001", text: "hi" } });
    expect(req!.headers.authorization).toBe(`Bearer ${bot!.token}`);
    expect(req!.headers["content-type"]).toBe("application/json; charset=utf-8");
  });

  it("writes to a user's DM by user id, without conversations.open", async () => {
    const receipt = await adapter.send(message({ to: "U0FAKEUSER", text: "psst" }), signal());
    expect(slack.requests.map((r) => r.path)).toEqual(["/api/chat.postMessage"]);
    expect(slack.delivered[0]).toMatchObject({ id: receipt.messageId, chat: "D0FAKEUSER", text: "psst" });
  });

  it("opens the DM with conversations.open where Slack will not take a user id, and keeps it", async () => {
    slack.next({ kind: "reject", reason: "channel_not_found" });
    const first = await adapter.send(message({ to: "U0FAKEUSER", text: "one", threadId: "1700000000.000100" }), signal());
    expect(slack.requests.map((r) => [r.path, r.body])).toEqual([
      ["/api/chat.postMessage", { channel: "U0FAKEUSER", text: "one", thread_ts: "1700000000.000100" }],
      ["/api/conversations.open", { users: "U0FAKEUSER" }],
      ["/api/chat.postMessage", { channel: "D0FAKEUSER", text: "one", thread_ts: "1700000000.000100" }],
    ]);
    expect(first.messageIds).toEqual(slack.delivered.map((d) => d.id));
    await adapter.send(message({ to: "U0FAKEUSER", text: "two" }), signal());
    expect(slack.requests.at(-1)!.body).toEqual({ channel: "D0FAKEUSER", text: "two" });
  });

  it("does not retry a missing channel, or a user the DM cannot be opened with", async () => {
    const missing = await failure(adapter.send(message({ to: "C0NOSUCH01", text: "x" }), signal()));
    expect(missing).toMatchObject({ kind: "rejected", platformCode: "channel_not_found" });
    const stranger = await failure(adapter.send(message({ to: "U0NOBODY01", text: "x" }), signal()));
    expect(stranger).toMatchObject({ kind: "rejected", platformCode: "user_not_found" });
    expect(slack.requests.map((r) => r.path)).toEqual(["/api/chat.postMessage", "/api/chat.postMessage", "/api/conversations.open"]);
    expect(slack.delivered).toHaveLength(0);
  });

  it("sends text literally: &, < and > escaped, so <!channel> pings nobody", async () => {
    await adapter.send(message({ text: "a < b & <!channel>" }), signal());
    expect(bodies()[0]!.text).toBe("a &lt; b &amp; &lt;!channel&gt;");
  });

  it("replies in a thread, and refuses a threadId that is no ts without a call", async () => {
    await adapter.send(message({ text: "re", threadId: "1700000000.000100" }), signal());
    expect(bodies()[0]).toMatchObject({ thread_ts: "1700000000.000100" });
    const err = await failure(adapter.send(message({ text: "re", threadId: "77" }), signal()));
    expect(err.kind).toBe("rejected");
    expect(slack.requests).toHaveLength(1);
  });

  it("heads the media with the text as a section, images as image blocks and other files as links", async () => {
    const urls = [`${CDN}/cat.png`, `${CDN}/report.pdf`];
    const receipt = await adapter.send(message({ text: "see *these*", mediaUrls: urls }), signal());
    expect(bodies()[0]).toEqual({
      channel: "C0FAKE0001",
      text: "see *these*",
      blocks: [
        { type: "section", text: { type: "mrkdwn", text: "see *these*" } },
        { type: "image", image_url: urls[0], alt_text: "cat.png" },
        { type: "section", text: { type: "mrkdwn", text: `<${urls[1]}|report.pdf>` } },
      ],
    });
    expect(slack.delivered).toEqual([
      expect.objectContaining({ id: receipt.messageId, text: "see *these*", media: [{ url: urls[0], kind: "image" }, { url: urls[1], kind: "link" }] }),
    ]);
  });

  it("names the files in a media-only message's notification text", async () => {
    await adapter.send(message({ mediaUrls: [`${CDN}/a.png`, `${CDN}/b.gif`] }), signal());
    expect(bodies()[0]!.text).toBe("a.png, b.gif");
  });

  it("sends text too long for a section first, on its own, then the media", async () => {
    const text = "y".repeat(SECTION_TEXT_MAX + 1);
    const receipt = await adapter.send(message({ text, mediaUrls: [`${CDN}/a.png`] }), signal());
    expect(bodies().map((b) => [b.text, (b.blocks as unknown[] | undefined)?.length])).toEqual([
      [text, undefined],
      ["a.png", 1],
    ]);
    expect(receipt.messageIds).toEqual(slack.delivered.map((d) => d.id));
  });

  it("refuses with Slack's code and a hint; a channel the bot is not in is for good", async () => {
    const err = await failure(adapter.send(message({ to: "C0FAKE0002", text: "x" }), signal()));
    expect(err).toMatchObject({ kind: "rejected", platformCode: "not_in_channel", retryable: false });
    expect(err.message).toBe("slack refused: not_in_channel (the bot is not a member of the channel; invite it)");
    slack.next(answer({ ok: false, error: "missing_scope", needed: "chat:write", provided: "users:read" }));
    expect((await failure(adapter.send(message({ text: "x" }), signal()))).message).toContain("lacks the scope chat:write");
  });

  it("takes Slack's transient codes as unavailable and its rate-limit codes as rate_limited, even with HTTP 200", async () => {
    slack.next(answer({ ok: false, error: "internal_error" }));
    slack.next(answer({ ok: false, error: "ratelimited" }));
    expect(await failure(adapter.send(message({ text: "x" }), signal()))).toMatchObject({ kind: "unavailable", platformCode: "internal_error" });
    expect(await failure(adapter.send(message({ text: "x" }), signal()))).toMatchObject({ kind: "rate_limited", retryAfterMs: undefined });
  });

  it("keeps Slack's code on a 429 and its Retry-After", async () => {
    slack.next({ kind: "rate_limit", retryAfterSeconds: 2 });
    expect(await failure(adapter.send(message({ text: "x" }), signal()))).toMatchObject({ kind: "rate_limited", retryAfterMs: 2000, platformCode: "ratelimited", status: 429 });
  });

  it("calls an ok answer without a ts unavailable", async () => {
    slack.next(answer({ ok: true, channel: "C0FAKE0001" }));
    expect(await failure(adapter.send(message({ text: "x" }), signal()))).toMatchObject({ kind: "unavailable" });
  });

  it("names the bot and team in status, and says why a bad token is unreachable", async () => {
    expect(await statusOf(adapter, signal())).toEqual({ reachable: true, identity: "@fake-bot (Fake Team)" });
    const strangerHttp = testHttp({ secrets: ["xoxb-stranger"] });
    const stranger = slackPlugin.create({
      channelId: "slack",
      accountId: "stranger",
      settings: SlackSettingsSchema.parse({ botToken: "xoxb-stranger", apiBaseUrl: slack.baseUrl }),
      http: strangerHttp.factory,
    });
    const probe = await statusOf(stranger, signal()).finally(() => strangerHttp.close());
    expect(probe).toEqual({ reachable: false, error: "slack refused: invalid_auth (the bot token is not valid; check botToken)" });
  });
});
