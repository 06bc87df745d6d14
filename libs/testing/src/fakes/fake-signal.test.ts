import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type FakeSignal, startFakeSignal } from "./fake-signal.js";

describe("fake signal-cli-rest-api", () => {
  let signal: FakeSignal;
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${signal.baseUrl}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  beforeAll(async () => {
    signal = await startFakeSignal();
  });
  afterAll(() => signal.close());
  beforeEach(() => signal.reset());

  it("describes itself and its accounts", async () => {
    expect(await (await fetch(`${signal.baseUrl}/v1/about`)).json()).toMatchObject({ versions: ["v1", "v2"], mode: "json-rpc" });
    expect(await (await fetch(`${signal.baseUrl}/v1/accounts`)).json()).toEqual(["+15550001111", "+15550002222"]);
    expect((await fetch(`${signal.baseUrl}/v1/health`)).status).toBe(204);
  });

  it("sends text with a quote and base64 attachments, answering the timestamp", async () => {
    const { status, body } = await post("/v2/send", {
      number: "+15550001111",
      recipients: ["+15557654321"],
      message: "hello",
      quote_timestamp: 1700000000123,
      quote_author: "+15557654321",
      base64_attachments: [`data:image/png;filename=a.png;base64,${Buffer.from([1, 2, 3]).toString("base64")}`],
    });
    expect(status).toBe(201);
    expect(body.timestamp).toMatch(/^\d{13}$/);
    expect(signal.delivered).toEqual([
      {
        id: body.timestamp,
        account: "+15550001111",
        chat: "+15557654321",
        text: "hello",
        media: [{ data: new Uint8Array([1, 2, 3]), kind: "attachment", contentType: "image/png", filename: "a.png" }],
        threadId: "1700000000123",
      },
    ]);
  });

  it("refuses a quote without its author, as signal-cli does", async () => {
    const { status, body } = await post("/v2/send", { number: "+15550001111", recipients: ["+15557654321"], message: "hi", quote_timestamp: 1700000000123 });
    expect(status).toBe(400);
    expect(body.error).toBe("Quote author parameter is missing");
    expect(signal.delivered).toHaveLength(0);
  });

  it("gives every send its own timestamp", async () => {
    const a = (await post("/v2/send", { number: "+15550001111", recipients: ["+15557654321"], message: "a" })).body.timestamp;
    const b = (await post("/v2/send", { number: "+15550001111", recipients: ["+15557654321"], message: "b" })).body.timestamp;
    expect(Number(b)).toBeGreaterThan(Number(a));
  });

  it("creates polls, which always show voters", async () => {
    const { status } = await post("/v1/polls/%2B15550002222", { recipient: "group.YWJj", question: "Tea?", answers: ["yes", "no"], allow_multiple_selections: false });
    expect(status).toBe(201);
    expect(signal.delivered[0]).toMatchObject({ account: "+15550002222", chat: "group.YWJj", poll: { question: "Tea?", options: ["yes", "no"], allowMultipleAnswers: false, anonymous: false } });
  });

  it("refuses with { error }", async () => {
    expect(await post("/v2/send", { number: "+15550001111", message: "x" })).toEqual({
      status: 400,
      body: { error: "Couldn't process request - please provide at least one recipient" },
    });
    expect((await post("/v2/send", { number: "+15550003333", recipients: ["+15557654321"], message: "x" })).body.error).toBe("User +15550003333 is not registered.");
    expect((await post("/v2/send", { number: "+15550001111", recipients: ["+15550009999"], message: "x" })).body.error).toMatch(/Unregistered user/);
    expect((await post("/v2/send", { number: "+15550001111", recipients: ["+15557654321"], base64_attachments: ["***"] })).body.error).toMatch(/invalid base64/);
    expect(signal.delivered).toHaveLength(0);
  });

  it("scripts a 429 with challenge tokens and no wait", async () => {
    signal.next({ kind: "rate_limit", retryAfterSeconds: 9 });
    const res = await fetch(`${signal.baseUrl}/v2/send`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ number: "+15550001111" }) });
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBeNull();
    expect(await res.json()).toMatchObject({ challenge_tokens: [expect.any(String)], account: "+15550001111" });
    expect(signal.tellsRetryAfter).toBe(false);
  });
});
