import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type FakeModelServer, freePort, startFakeModelServer } from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ModelChunk, type ModelRequest, ProviderError, type ToolSpec } from "./model-provider.js";
import { expectNotJsonEventFailure } from "./contract-helpers.js";
import { OpenAiProvider } from "./openai-provider.js";

let fake: FakeModelServer;
beforeAll(async () => {
  fake = await startFakeModelServer();
});
afterAll(async () => {
  await fake?.close();
});

const provider = (baseUrl = fake.baseUrl, timeoutMs = 5_000) =>
  new OpenAiProvider({ name: "openai-test", baseUrl, apiKey: "sk-test", timeoutMs });

const request = (message: string, extra: Partial<ModelRequest> = {}): ModelRequest => ({
  model: "gpt-test",
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

/** The body of the last request the fake saw for `message`. */
function bodyFor(message: string): Record<string, unknown> {
  const hit = fake.requests.filter((r) => JSON.stringify(r.body.messages).includes(message)).at(-1);
  if (hit === undefined) throw new Error(`no request for ${message}`);
  return hit.body;
}

const TIME_NOW: ToolSpec = { name: "time__now", description: "now", parameters: { type: "object", properties: {} } };

describe("OpenAiProvider against a chat-completions server", () => {
  it("streams text in several chunks, then usage, with the documented request", async () => {
    const chunks = await collect(provider().stream(request("hello stream"), never()));
    expect(chunks.filter((c) => c.type === "text").length).toBeGreaterThan(1);
    expect(textOf(chunks)).toBe("You said: hello stream");
    expect(chunks.slice(-2)).toEqual([
      { type: "usage", inputTokens: 7, outputTokens: 5 },
      { type: "stop", reason: "stop" },
    ]);

    const seen = fake.requests.at(-1)!;
    expect(seen.api).toBe("openai");
    expect(seen.headers.authorization).toBe("Bearer sk-test");
    expect(seen.body).toMatchObject({ model: "gpt-test", stream: true, stream_options: { include_usage: true } });
    expect(seen.body).not.toHaveProperty("tools");
    expect(seen.body).not.toHaveProperty("reasoning_effort");
  });

  it("sends the system prompt (extraSystemPrompt first) as the leading system message", async () => {
    await collect(provider().stream(request("with system", { system: "EXTRA RULES\n\nYou are the agent." }), never()));
    expect(bodyFor("with system").messages).toEqual([
      { role: "system", content: "EXTRA RULES\n\nYou are the agent." },
      { role: "user", content: "with system" },
    ]);
    await collect(provider().stream(request("no system"), never()));
    expect(bodyFor("no system").messages).toEqual([{ role: "user", content: "no system" }]);
  });

  it("assembles tool-call deltas into complete calls with parsed JSON arguments", async () => {
    const chunks = await collect(
      provider().stream(request("please tools:time__now,http__fetch", { tools: [TIME_NOW] }), never()),
    );
    expect(chunks.filter((c) => c.type === "tool_call")).toEqual([
      { type: "tool_call", call: { id: "call_1", name: "time__now", input: {} } },
      { type: "tool_call", call: { id: "call_2", name: "http__fetch", input: { url: "http://127.0.0.1:9/" } } },
    ]);
    expect(bodyFor("please tools").tools).toEqual([
      { type: "function", function: { name: "time__now", description: "now", parameters: TIME_NOW.parameters } },
    ]);
  });

  it("replays assistant tool calls and tool results in the wire format", async () => {
    const history: ModelRequest["messages"] = [
      { role: "user", content: "replay tools:time__now" },
      { role: "assistant", content: "", toolCalls: [{ id: "call_1", name: "time__now", input: { tz: "UTC" } }] },
      { role: "tool", toolCallId: "call_1", name: "time__now", content: "12:00" },
    ];
    const chunks = await collect(provider().stream(request("", { messages: history }), never()));
    expect(textOf(chunks)).toBe("Tools said: 1 results");
    expect(bodyFor("replay tools").messages).toEqual([
      { role: "user", content: "replay tools:time__now" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "time__now", arguments: '{"tz":"UTC"}' } }],
      },
      { role: "tool", tool_call_id: "call_1", content: "12:00" },
    ]);
  });

  it("passes sampling parameters and the tool choice through under their chat-completions names", async () => {
    const sampling = {
      temperature: 0.2,
      topP: 0.9,
      maxTokens: 50,
      stop: ["END"],
      seed: 42,
      presencePenalty: 0.5,
      frequencyPenalty: -0.5,
      responseFormat: { type: "json_object" },
      user: "u-1",
      parallelToolCalls: false,
    };
    await collect(provider().stream(request("sampled", { sampling, tools: [TIME_NOW], toolChoice: { mode: "function", name: "time__now" } }), never()));
    expect(bodyFor("sampled")).toMatchObject({
      temperature: 0.2,
      top_p: 0.9,
      max_tokens: 50,
      stop: ["END"],
      seed: 42,
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      response_format: { type: "json_object" },
      user: "u-1",
      parallel_tool_calls: false,
      tool_choice: { type: "function", function: { name: "time__now" } },
    });
    await collect(provider().stream(request("required choice", { tools: [TIME_NOW], toolChoice: { mode: "required" } }), never()));
    expect(bodyFor("required choice").tool_choice).toBe("required");
    // Without tools, neither tool_choice nor parallel_tool_calls may go (the API refuses them).
    await collect(provider().stream(request("no tools", { sampling: { parallelToolCalls: true }, toolChoice: { mode: "required" } }), never()));
    expect(bodyFor("no tools")).not.toHaveProperty("tool_choice");
    expect(bodyFor("no tools")).not.toHaveProperty("parallel_tool_calls");
  });

  it("reports why the model stopped: length when max_tokens cut it, tool_calls for calls", async () => {
    const cut = await collect(provider().stream(request("cut short please", { sampling: { maxTokens: 1 } }), never()));
    expect(cut.filter((c) => c.type === "text")).toHaveLength(1);
    expect(cut.at(-1)).toEqual({ type: "stop", reason: "length" });
    const calls = await collect(provider().stream(request("stop tools:get_weather", { tools: [TIME_NOW] }), never()));
    expect(calls.at(-1)).toEqual({ type: "stop", reason: "tool_calls" });
  });

  it.each([
    ["low", "low"],
    ["medium", "medium"],
    ["high", "high"],
    ["extended", "high"],
  ] as const)("maps thinking %s to reasoning_effort %s", async (thinking, effort) => {
    await collect(provider().stream(request(`think ${thinking}`, { thinking }), never()));
    expect(bodyFor(`think ${thinking}`).reasoning_effort).toBe(effort);
  });

  it("turns HTTP errors into ProviderErrors with status, retryability and Retry-After", async () => {
    const err500 = await collect(provider().stream(request("fail500 openai"), never())).catch((e: unknown) => e);
    expect(err500).toBeInstanceOf(ProviderError);
    expect(err500).toMatchObject({ status: 500, retryable: true, message: expect.stringContaining("fake status 500") });

    const err429 = await collect(provider().stream(request("fail429 openai"), never())).catch((e: unknown) => e);
    expect(err429).toMatchObject({ status: 429, retryable: true, retryAfterMs: 0 });
  });

  it("fails retryably when the stream is cut before [DONE], after the text already streamed", async () => {
    const chunks: ModelChunk[] = [];
    const err = await (async () => {
      for await (const chunk of provider().stream(request("drop openai"), never())) chunks.push(chunk);
    })().catch((e: unknown) => e);
    expect(textOf(chunks)).toBe("partial ");
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toMatchObject({ retryable: true });
  });

  it("fails retryably when a stream stalls longer than timeoutMs", async () => {
    const err = await collect(provider(fake.baseUrl, 200).stream(request("hang openai"), never())).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: "ProviderError", retryable: true, message: expect.stringContaining("stalled") });
  });

  it("fails retryably when nothing listens", async () => {
    const port = await freePort();
    const err = await collect(provider(`http://127.0.0.1:${port}/v1`).stream(request("nobody"), never())).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ name: "ProviderError", retryable: true, message: expect.stringContaining("cannot reach") });
  });

  it("stops with the abort reason, not a ProviderError, when the run is aborted mid-stream", async () => {
    const controller = new AbortController();
    const err = await (async () => {
      for await (const chunk of provider().stream(request("slow openai"), controller.signal)) {
        if (chunk.type === "text") controller.abort(new Error("run aborted"));
      }
    })().catch((e: unknown) => e);
    expect(err).toBeDefined();
    expect(err).not.toBeInstanceOf(ProviderError);
  });
});

describe("OpenAiProvider on unusual streams", () => {
  let server: Server;
  let baseUrl: string;
  let next = "";
  beforeAll(async () => {
    server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" }).end(next);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const frames = (...objects: unknown[]) => objects.map((o) => `data: ${JSON.stringify(o)}\n\n`).join("") + "data: [DONE]\n\n";

  it("reports streamed reasoning as a thinking chunk", async () => {
    next = frames({ choices: [{ delta: { reasoning_content: "hmm" } }] }, { choices: [{ delta: { content: "ok" } }] });
    expect(await collect(provider(baseUrl).stream(request("x"), never()))).toEqual([
      { type: "thinking" },
      { type: "text", text: "ok" },
    ]);
  });

  it("refuses invalid tool arguments without retry, and reports an in-stream error retryably", async () => {
    next = frames({ choices: [{ delta: { tool_calls: [{ index: 0, id: "c", function: { name: "t", arguments: "{oops" } }] } }] });
    const bad = await collect(provider(baseUrl).stream(request("x"), never())).catch((e: unknown) => e);
    expect(bad).toMatchObject({ name: "ProviderError", retryable: false, message: expect.stringContaining("invalid JSON") });

    next = frames({ error: { message: "overloaded" } });
    const overloaded = await collect(provider(baseUrl).stream(request("x"), never())).catch((e: unknown) => e);
    expect(overloaded).toMatchObject({ name: "ProviderError", retryable: true, message: expect.stringContaining("overloaded") });
  });

  it("fails as the provider (MODEL_ERROR), not as a bug of ours, when a chunk is not JSON", async () => {
    next = `data: ${JSON.stringify({ choices: [{ delta: { content: "partial" } }] })}\n\ndata: {"choices": [{"delta": \n\ndata: [DONE]\n\n`;
    await expectNotJsonEventFailure(provider(baseUrl).stream(request("x"), never()), "openai-test");
  });
});
