import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeModelServer, startFakeModelServer } from "./fake-model-server.js";
import { FAKE_USAGE } from "./openai-wire.js";

let fake: FakeModelServer;
beforeAll(async () => {
  fake = await startFakeModelServer();
});
afterAll(async () => {
  await fake?.close();
});

/** The data of every event of one streamed chat completion. */
async function stream(body: Record<string, unknown>): Promise<Array<Record<string, unknown>>> {
  const res = await fetch(`${fake.baseUrl}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "m", stream: true, ...body }),
  });
  const events = (await res.text()).split("\n\n").filter((e) => e.startsWith("data: {"));
  return events.map((e) => JSON.parse(e.slice(6)) as Record<string, unknown>);
}

describe("the fake model server's chat-completions stream", () => {
  it("reports usage in a last chunk only when stream_options.include_usage asks, as OpenAI does", async () => {
    const asked = await stream({ messages: [{ role: "user", content: "count" }], stream_options: { include_usage: true } });
    expect(asked.at(-1)).toMatchObject({ choices: [], usage: FAKE_USAGE });
    const silent = await stream({ messages: [{ role: "user", content: "count" }] });
    expect(silent.some((c) => "usage" in c)).toBe(false);
  });

  it("cuts a text answer at max_tokens chunks with finish_reason length, and calls client-named tools", async () => {
    const cut = await stream({ messages: [{ role: "user", content: "long answer" }], max_completion_tokens: 1 });
    const finishes = cut.flatMap((c) => (c.choices as Array<{ finish_reason: string | null }>).map((ch) => ch.finish_reason)).filter(Boolean);
    expect(finishes).toEqual(["length"]);
    const called = await stream({ messages: [{ role: "user", content: "tools:get_weather" }] });
    expect(JSON.stringify(called)).toContain('"name":"get_weather"');
    expect(JSON.stringify(called)).toContain('{\\"city\\":');
  });
});

describe("the fake model server's failures on command", () => {
  it("answers the scripted turns in order, whatever the message says, then as the message steers", async () => {
    fake.script({ kind: "status", status: 429, retryAfter: "30" }, { kind: "status", status: 503 });
    const post = () =>
      fetch(`${fake.baseUrl}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "m", stream: true, messages: [{ role: "user", content: "hello" }] }),
      });
    const limited = await post();
    expect([limited.status, limited.headers.get("retry-after")]).toEqual([429, "30"]);
    await limited.text();
    const failed = await post();
    expect(failed.status).toBe(503);
    await failed.text();
    const answered = await post();
    expect(answered.status).toBe(200);
    expect(await answered.text()).toContain(`"content":"hello"`);
  });
});
