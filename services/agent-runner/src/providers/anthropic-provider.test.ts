import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type FakeModelServer, startFakeModelServer } from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectNotJsonEventFailure } from "./contract-helpers.js";
import { AnthropicProvider } from "./anthropic-provider.js";
import { type ModelChunk, type ModelRequest, ProviderError, type ToolSpec } from "./model-provider.js";

let fake: FakeModelServer;
beforeAll(async () => {
  fake = await startFakeModelServer();
});
afterAll(async () => {
  await fake?.close();
});

const provider = (baseUrl = fake.baseUrl) =>
  new AnthropicProvider({ name: "anthropic-test", baseUrl, apiKey: "sk-ant-test", timeoutMs: 5_000 });

const request = (message: string, extra: Partial<ModelRequest> = {}): ModelRequest => ({
  model: "claude-test",
  system: "",
  messages: [{ role: "user", content: message }],
  tools: [],
  ...extra,
});

async function collect(stream: AsyncIterable<ModelChunk>): Promise<ModelChunk[]> {
  const chunks: ModelChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

const textOf = (chunks: ModelChunk[]) => chunks.map((c) => (c.type === "text" ? c.text : "")).join("");
const never = () => new AbortController().signal;

function seenFor(message: string) {
  const hit = fake.requests.filter((r) => JSON.stringify(r.body.messages).includes(message)).at(-1);
  if (hit === undefined) throw new Error(`no request for ${message}`);
  return hit;
}

const TIME_NOW: ToolSpec = { name: "time__now", description: "now", parameters: { type: "object", properties: {} } };

describe("AnthropicProvider against a Messages API server", () => {
  it("streams text, then usage with input and output tokens, with the documented headers", async () => {
    const chunks = await collect(provider().stream(request("hello claude"), never()));
    expect(chunks.filter((c) => c.type === "text").length).toBeGreaterThan(1);
    expect(textOf(chunks)).toBe("You said: hello claude");
    expect(chunks.slice(-2)).toEqual([
      { type: "usage", inputTokens: 9, outputTokens: 15 },
      { type: "stop", reason: "stop" },
    ]);

    const seen = seenFor("hello claude");
    expect(seen.api).toBe("anthropic");
    expect(seen.headers["x-api-key"]).toBe("sk-ant-test");
    expect(seen.headers["anthropic-version"]).toBe("2023-06-01");
    expect(seen.body).toMatchObject({ model: "claude-test", stream: true, max_tokens: 4_096 });
    expect(seen.body).not.toHaveProperty("thinking");
    expect(seen.body).not.toHaveProperty("system");
  });

  it("passes the sampling parameters the Messages API has and maps the tool choice", async () => {
    const sampling = { temperature: 0.3, topP: 0.8, maxTokens: 100, stop: ["END"], user: "u-2", parallelToolCalls: false };
    await collect(provider().stream(request("sampled claude", { sampling, tools: [TIME_NOW], toolChoice: { mode: "required" } }), never()));
    expect(seenFor("sampled claude").body).toMatchObject({
      temperature: 0.3,
      top_p: 0.8,
      max_tokens: 100,
      stop_sequences: ["END"],
      metadata: { user_id: "u-2" },
      tool_choice: { type: "any", disable_parallel_tool_use: true },
    });
    await collect(provider().stream(request("named claude", { tools: [TIME_NOW], toolChoice: { mode: "function", name: "time__now" } }), never()));
    expect(seenFor("named claude").body.tool_choice).toEqual({ type: "tool", name: "time__now" });
    const cut = await collect(provider().stream(request("cut claude short", { sampling: { maxTokens: 1 } }), never()));
    expect(cut.at(-1)).toEqual({ type: "stop", reason: "length" });
  });

  it.each([
    ["seed", { seed: 1 }],
    ["presence_penalty", { presencePenalty: 1 }],
    ["frequency_penalty", { frequencyPenalty: 1 }],
    ["response_format", { responseFormat: { type: "json_object" } }],
  ])("refuses %s, which the Messages API lacks, before calling it", async (param, sampling) => {
    const before = fake.requests.length;
    const err = await collect(provider().stream(request(`refuse ${param}`, { sampling }), never())).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "INVALID_REQUEST", message: expect.stringContaining(param), details: { param } });
    expect(fake.requests.length).toBe(before);
  });

  it("posts to {baseUrl}/v1/messages when the base does not end in /v1", async () => {
    const root = fake.baseUrl.replace(/\/v1$/, "");
    expect(textOf(await collect(provider(root).stream(request("rooted base"), never())))).toBe("You said: rooted base");
  });

  it("sends the system prompt (extraSystemPrompt first) as the top-level system field", async () => {
    await collect(provider().stream(request("with system", { system: "EXTRA RULES\n\nYou are the agent." }), never()));
    const { body } = seenFor("with system");
    expect(body.system).toBe("EXTRA RULES\n\nYou are the agent.");
    expect(body.messages).toEqual([{ role: "user", content: "with system" }]);
  });

  it("assembles input_json deltas into complete tool calls with parsed input", async () => {
    const chunks = await collect(
      provider().stream(request("please tools:time__now,http__fetch", { tools: [TIME_NOW] }), never()),
    );
    expect(chunks.filter((c) => c.type === "tool_call")).toEqual([
      { type: "tool_call", call: { id: "call_1", name: "time__now", input: {} } },
      { type: "tool_call", call: { id: "call_2", name: "http__fetch", input: { url: "http://127.0.0.1:9/" } } },
    ]);
    expect(seenFor("please tools").body.tools).toEqual([
      { name: "time__now", description: "now", input_schema: TIME_NOW.parameters },
    ]);
  });

  it("sends tool results back as one user turn of tool_result blocks", async () => {
    const history: ModelRequest["messages"] = [
      { role: "user", content: "replay tools:a,b" },
      {
        role: "assistant",
        content: "",
        toolCalls: [
          { id: "call_1", name: "a", input: {} },
          { id: "call_2", name: "b", input: { x: 1 } },
        ],
      },
      { role: "tool", toolCallId: "call_1", name: "a", content: "one" },
      { role: "tool", toolCallId: "call_2", name: "b", content: "bad", isError: true },
    ];
    const chunks = await collect(provider().stream(request("", { messages: history }), never()));
    expect(textOf(chunks)).toBe("Tools said: 2 results");
    expect(seenFor("replay tools").body.messages).toEqual([
      { role: "user", content: "replay tools:a,b" },
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "call_1", name: "a", input: {} },
          { type: "tool_use", id: "call_2", name: "b", input: { x: 1 } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "call_1", content: "one", is_error: false },
          { type: "tool_result", tool_use_id: "call_2", content: "bad", is_error: true },
        ],
      },
    ]);
  });

  it.each([
    ["low", 1_024],
    ["medium", 4_096],
    ["high", 16_384],
    ["extended", 32_000],
  ] as const)("maps thinking %s to budget_tokens %i, raising max_tokens by it", async (thinking, budget) => {
    await collect(provider().stream(request(`think ${thinking}`, { thinking }), never()));
    const { body } = seenFor(`think ${thinking}`);
    expect(body.thinking).toEqual({ type: "enabled", budget_tokens: budget });
    expect(body.max_tokens).toBe(4_096 + budget);
  });

  it("turns HTTP errors into ProviderErrors with status, retryability and Retry-After", async () => {
    const err500 = await collect(provider().stream(request("fail500 claude"), never())).catch((e: unknown) => e);
    expect(err500).toBeInstanceOf(ProviderError);
    expect(err500).toMatchObject({ status: 500, retryable: true, message: expect.stringContaining("fake status 500") });
    const err429 = await collect(provider().stream(request("fail429 claude"), never())).catch((e: unknown) => e);
    expect(err429).toMatchObject({ status: 429, retryable: true, retryAfterMs: 0 });
  });

  it("fails retryably when the stream is cut before message_stop", async () => {
    const err = await collect(provider().stream(request("drop claude"), never())).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: "ProviderError", retryable: true });
  });
});

describe("AnthropicProvider on unusual streams", () => {
  let server: Server;
  let baseUrl: string;
  let next = "";
  beforeAll(async () => {
    server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" }).end(next);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const events = (...objects: Array<{ type: string } & Record<string, unknown>>) =>
    objects.map((o) => `event: ${o.type}\ndata: ${JSON.stringify(o)}\n\n`).join("");

  it("reports a thinking block as a thinking chunk", async () => {
    next = events(
      { type: "message_start", message: { usage: { input_tokens: 1 } } },
      { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "" } },
      { type: "content_block_stop", index: 0 },
      { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "ok" } },
      { type: "message_stop" },
    );
    expect(await collect(provider(baseUrl).stream(request("x"), never()))).toEqual([
      { type: "thinking" },
      { type: "text", text: "ok" },
    ]);
  });

  it("retries an overloaded error event but not an invalid request one", async () => {
    next = events({ type: "message_start", message: {} }, { type: "error", error: { type: "overloaded_error", message: "busy" } });
    const busy = await collect(provider(baseUrl).stream(request("x"), never())).catch((e: unknown) => e);
    expect(busy).toMatchObject({ name: "ProviderError", retryable: true, message: expect.stringContaining("busy") });

    next = events({ type: "error", error: { type: "invalid_request_error", message: "no" } });
    const invalid = await collect(provider(baseUrl).stream(request("x"), never())).catch((e: unknown) => e);
    expect(invalid).toMatchObject({ name: "ProviderError", retryable: false });
  });

  it("fails as the provider (MODEL_ERROR), not as a bug of ours, when an event is not JSON", async () => {
    next =
      events({ type: "message_start", message: {} }, { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "partial" } }) +
      'event: content_block_delta\ndata: {"type": "content_block_delta", "delta": {\n\n' +
      events({ type: "message_stop" });
    await expectNotJsonEventFailure(provider(baseUrl).stream(request("x"), never()), "anthropic-test");
  });
});
