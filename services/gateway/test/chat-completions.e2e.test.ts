import { type FakeModelServer, startFakeModelServer } from "@gw/testing";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RUN_AGENTS, runModels } from "./fixtures/agent-runs.js";
import { type GatewayUnderTest, MODES, startGateway, TOKEN } from "./fixtures/gateway.js";
import { WsClient } from "./fixtures/ws-client.js";

describe.each(MODES)("POST /v1/chat/completions (%s)", (mode) => {
  let gw: GatewayUnderTest;
  let fake: FakeModelServer;
  const post = (body: unknown, token = TOKEN) =>
    fetch(`${gw.httpUrl()}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    fake = await startFakeModelServer();
    gw = await startGateway(mode, { agents: RUN_AGENTS, models: runModels(fake) });
  });
  afterAll(async () => {
    await gw?.stop();
    await fake?.close();
  });

  it("answers with a chat.completion object (SPEC §2)", async () => {
    const res = await post({ model: "agent:main", messages: [{ role: "user", content: "ping pong" }] });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toEqual({
      id: expect.stringMatching(/^chatcmpl_[0-9a-f-]{36}$/),
      object: "chat.completion",
      created: expect.any(Number),
      model: "agent:main",
      choices: [{ index: 0, message: { role: "assistant", content: "ping pong" }, finish_reason: "stop" }],
      usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    });
  });

  it("streams SSE: role first, content chunks, data: [DONE] last", async () => {
    const res = await post({ model: "oa", messages: [{ role: "user", content: "stream me" }], stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/text\/event-stream/);
    const text = await res.text();
    const events = text.split("\n\n").filter(Boolean);
    expect(events.every((e) => e.startsWith("data: "))).toBe(true);
    expect(events.at(-1)).toBe("data: [DONE]");
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.slice(6)) as { id: string; object: string; choices: Array<{ delta: { role?: string; content?: string } }> });
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: "assistant" });
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks.every((c) => c.object === "chat.completion.chunk")).toBe(true);
    expect(chunks.map((c) => c.choices[0]!.delta.content ?? "").join("")).toBe("You said: stream me");
  });

  it("is stateless without `user`: the request's turns reach the model and no session is kept", async () => {
    const messages = [
      { role: "system", content: "be brief" },
      { role: "user", content: "first question" },
      { role: "assistant", content: "first answer" },
      { role: "user", content: "stateless follow-up" },
    ];
    const res = await post({ model: "oa", messages });
    expect(res.status).toBe(200);
    const seen = fake.requests.find((r) => JSON.stringify(r.body).includes("stateless follow-up"));
    const sent = (seen?.body as { messages: Array<{ role: string; content: unknown }> }).messages;
    expect(sent.filter((m) => m.role !== "system").map((m) => [m.role, m.content])).toEqual([
      ["user", "first question"],
      ["assistant", "first answer"],
      ["user", "stateless follow-up"],
    ]);
    expect(JSON.stringify(sent.filter((m) => m.role === "system"))).toContain("be brief");

    const client = await WsClient.open(gw.wsUrl());
    await client.connect(TOKEN);
    const list = await client.request("sessions.list", { limit: 500 });
    client.close();
    const keys = (list.payload?.sessions as Array<{ key: string }>).map((s) => s.key);
    expect(keys.filter((k) => k.startsWith("openai:ephemeral-"))).toEqual([]);
  });

  it("keeps the conversation in the session `openai:<user>` when `user` is given", async () => {
    for (const content of ["remember one", "remember two"]) {
      const res = await post({ model: "oa", user: "carol", messages: [{ role: "user", content }] });
      expect(res.status).toBe(200);
    }
    const second = fake.requests.find((r) => JSON.stringify(r.body).includes("remember two"));
    expect(JSON.stringify(second?.body)).toContain("remember one");
    const client = await WsClient.open(gw.wsUrl());
    await client.connect(TOKEN);
    const preview = await client.request("sessions.preview", { key: "openai:carol" });
    client.close();
    const bodies = (preview.payload?.messages as Array<{ role: string; body: string }>).map((m) => m.body);
    expect(bodies).toEqual(expect.arrayContaining(["remember one", "remember two"]));
  });

  it("refuses an unknown model and a bad body with 400 invalid_request_error, and no bearer with 401", async () => {
    const unknown = await post({ model: "agent:nobody", messages: [{ role: "user", content: "x" }] });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({ error: { type: "invalid_request_error", message: expect.stringContaining("nobody") } });
    const bad = await post({ model: "main", messages: "nope" });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { type: "invalid_request_error" } });
    const anon = await fetch(`${gw.httpUrl()}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: "Bearer wrong", "content-type": "application/json" },
      body: "{}",
    });
    expect(anon.status).toBe(401);
  });

  it("refuses what it cannot honour with a 400 naming the parameter, never a silent ignore", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ n: 3 }, "n"],
      [{ logit_bias: { "1": 5 } }, "logit_bias"],
      [{ logprobs: true }, "logprobs"],
      // Agent oa's model is configured without image input (models.providers.<id>.input).
      [{ messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://example.org/a.png" } }] }] }, "messages[0].content[0]"],
      [{ messages: [{ role: "user", content: "x" }, { role: "tool", tool_call_id: "call_9", content: "orphan" }] }, "messages[1]"],
      [{ messages: [{ role: "user", content: "x" }, { role: "assistant", content: "last" }] }, "messages[1]"],
      [{ tools: [{ type: "custom", custom: { name: "x" } }] }, "tools[0].type"],
    ];
    for (const [extra, param] of cases) {
      const res = await post({ model: "oa", messages: [{ role: "user", content: "refuse me" }], ...extra });
      expect(res.status, JSON.stringify(extra)).toBe(400);
      // `param` as OpenAI spells it; the message names the place as every validation message does.
      const place = `body.${param.replace(/\[(\d+)\]/g, ".$1")}`;
      expect(await res.json()).toMatchObject({ error: { type: "invalid_request_error", param, message: expect.stringContaining(place) } });
    }
  });

  it("streams a client tool call as a tool_calls delta before finish_reason tool_calls, and usage last when asked", async () => {
    const res = await post({
      model: "oa",
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: "user", content: "raw tools:get_weather" }],
      tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: {} } } }],
    });
    const chunks = (await res.text())
      .split("\n\n")
      .filter((e) => e.startsWith("data: {"))
      .map((e) => JSON.parse(e.slice(6)) as { choices: Array<{ delta: Record<string, unknown>; finish_reason: string | null }>; usage?: unknown });
    expect(chunks.slice(-3)).toEqual([
      expect.objectContaining({
        choices: [
          {
            index: 0,
            delta: { tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
            finish_reason: null,
          },
        ],
        usage: null,
      }),
      expect.objectContaining({ choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }], usage: null }),
      expect.objectContaining({ choices: [], usage: { prompt_tokens: 7, completion_tokens: 5, total_tokens: 12 } }),
    ]);
  });

  it("gives the official openai client the same answer streaming and non-streaming", async () => {
    const client = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.httpUrl()}/v1`, maxRetries: 0, timeout: 20_000 });
    const whole = await client.chat.completions.create({ model: "an", messages: [{ role: "user", content: "same answer" }], user: "sdk-user" });
    const stream = await client.chat.completions.create({ model: "an", messages: [{ role: "user", content: "same answer" }], user: "sdk-user", stream: true });
    let streamed = "";
    for await (const chunk of stream) streamed += chunk.choices[0]?.delta?.content ?? "";
    expect(whole.choices[0]?.message.content).toBe("You said: same answer");
    expect(streamed).toBe(whole.choices[0]?.message.content);
  });
});
