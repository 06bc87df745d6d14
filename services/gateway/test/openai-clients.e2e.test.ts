import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { ChatOpenAI } from "@langchain/openai";
import { FAKE_USAGE, type FakeModelServer, startFakeModelServer } from "@gw/testing";
import { generateText, jsonSchema, stepCountIs, streamText, tool } from "ai";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RUN_AGENTS, runModels } from "./fixtures/agent-runs.js";
import { type GatewayUnderTest, MODES, startGateway, TOKEN } from "./fixtures/gateway.js";

const WEATHER_PARAMS: { type: "object"; properties: Record<string, { type: "string" }>; required: string[]; additionalProperties: false } = {
  type: "object",
  properties: { city: { type: "string" } },
  required: ["city"],
  additionalProperties: false,
};

/** The client-side tool every client below declares: the gateway must hand its calls back. */
const weather = (city: string) => `Sunny in ${city}`;

/** Every request the fake model saw for one conversation (its first user message). */
function seenFor(fake: FakeModelServer, marker: string) {
  return fake.requests.filter((r) => JSON.stringify(r.body.messages).includes(marker));
}

/**
 * The OpenAI-compatible surface driven by the clients people use, unmodified: the `openai` SDK
 * (chat completions and Responses), the Vercel AI SDK (`@ai-sdk/openai`, whose default model
 * speaks the Responses API, and `@ai-sdk/openai-compatible`), and LangChain's ChatOpenAI, against
 * a fake upstream that reports usage and calls tools.
 */
describe.each(MODES)("OpenAI-compatible clients (%s)", (mode) => {
  let gw: GatewayUnderTest;
  let fake: FakeModelServer;
  const baseURL = () => `${gw.httpUrl()}/v1`;
  const sdk = () => new OpenAI({ apiKey: TOKEN, baseURL: baseURL(), maxRetries: 0, timeout: 30_000 });

  beforeAll(async () => {
    fake = await startFakeModelServer();
    gw = await startGateway(mode, { agents: RUN_AGENTS, models: runModels(fake) });
  });
  afterAll(async () => {
    await gw?.stop();
    await fake?.close();
  });

  it("openai SDK: runTools completes a client-side tool loop, streaming and not", async () => {
    for (const stream of [false, true] as const) {
      const marker = `run tools ${stream} tools:get_weather`;
      const calls: string[] = [];
      const tools = [
        {
          type: "function" as const,
          function: {
            name: "get_weather",
            description: "The weather in a city",
            parameters: WEATHER_PARAMS,
            parse: JSON.parse,
            function: ({ city }: { city: string }) => {
              calls.push(city);
              return weather(city);
            },
          },
        },
      ];
      const body = { model: "oa", messages: [{ role: "user" as const, content: marker }], tools };
      const runner = stream ? sdk().chat.completions.runTools({ ...body, stream: true }) : sdk().chat.completions.runTools(body);
      expect(await runner.finalContent()).toBe("Tools said: 1 results");
      expect(calls).toEqual(["Paris"]);
      const upstream = seenFor(fake, marker);
      // The client's result reached the model, and the agent's own tools were offered beside the client's.
      expect(JSON.stringify(upstream.at(-1)!.body.messages)).toContain("Sunny in Paris");
      const offered = (upstream[0]!.body.tools as Array<{ function: { name: string } }>).map((t) => t.function.name);
      expect(offered.sort()).toEqual(["get_weather", "time__now"]);
    }
  });

  it("openai SDK: runTools works the same on an agent whose model speaks the Anthropic Messages API", async () => {
    const tools = [
      {
        type: "function" as const,
        function: { name: "get_weather", description: "weather", parameters: WEATHER_PARAMS, parse: JSON.parse, function: ({ city }: { city: string }) => weather(city) },
      },
    ];
    const runner = sdk().chat.completions.runTools({ model: "an", messages: [{ role: "user", content: "claude tools:get_weather" }], tools });
    expect(await runner.finalContent()).toBe("Tools said: 1 results");
    const upstream = seenFor(fake, "claude tools:get_weather");
    expect(upstream.map((r) => r.api)).toEqual(["anthropic", "anthropic"]);
    expect(JSON.stringify(upstream[1]!.body.messages)).toContain("Sunny in Paris");
    // The Messages API reports its own counts (the fake's: 9 in, 15 out per call).
    expect((await runner.totalUsage()).prompt_tokens).toBe(18);
  });

  it("openai SDK: a tool call ends the answer with finish_reason tool_calls; usage is the upstream's", async () => {
    const client = sdk();
    const tools = [{ type: "function" as const, function: { name: "get_weather", parameters: WEATHER_PARAMS } }];
    const whole = await client.chat.completions.create({ model: "oa", messages: [{ role: "user", content: "whole tools:get_weather" }], tools });
    expect(whole.choices[0]).toMatchObject({
      finish_reason: "tool_calls",
      message: { role: "assistant", tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
    });
    expect(whole.usage).toEqual(FAKE_USAGE);

    const stream = await client.chat.completions.create({
      model: "oa",
      messages: [{ role: "user", content: "usage please" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: FAKE_USAGE });
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("")).toBe("You said: usage please");

    // An agent tool inside the gateway means two model calls: their usage adds up.
    const agentTool = await client.chat.completions.create({ model: "oa", messages: [{ role: "user", content: "sum tools:time__now" }] });
    expect(agentTool.choices[0]?.message.content).toBe("Tools said: 1 results");
    expect(agentTool.usage).toEqual({ prompt_tokens: 14, completion_tokens: 10, total_tokens: 24 });
  });

  it("keeps the whole exchange in the session with `user`: agent and client tools in one turn", async () => {
    const client = sdk();
    const tools = [{ type: "function" as const, function: { name: "get_weather", parameters: WEATHER_PARAMS } }];
    const user = `mixed-${mode}`;
    const first = await client.chat.completions.create({
      model: "oa",
      user,
      messages: [{ role: "user", content: "mixed tools:time__now,get_weather" }],
      tools,
    });
    const message = first.choices[0]!.message;
    // The agent's own call ran inside the gateway; only the client's reached the client.
    expect(message.tool_calls?.map((c) => (c.type === "function" ? c.function.name : c.type))).toEqual(["get_weather"]);
    const call = message.tool_calls![0]!;
    const second = await client.chat.completions.create({
      model: "oa",
      user,
      messages: [
        { role: "user", content: "mixed tools:time__now,get_weather" },
        message,
        { role: "tool", tool_call_id: call.id, content: weather("Paris") },
      ],
      tools,
    });
    // The session held the agent's result too: the model saw both.
    expect(second.choices[0]).toMatchObject({ finish_reason: "stop", message: { content: "Tools said: 2 results" } });
    const last = seenFor(fake, "mixed tools").at(-1)!.body.messages as Array<{ role: string }>;
    expect(last.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "tool"]);
  });

  it("openai SDK: the Responses API answers, streams typed events and hands client tool calls back", async () => {
    const client = sdk();
    const whole = await client.responses.create({ model: "oa", input: "responses hello" });
    expect(whole).toMatchObject({ object: "response", status: "completed", output_text: "You said: responses hello" });
    expect(whole.usage).toMatchObject({ input_tokens: 7, output_tokens: 5, total_tokens: 12 });

    const events: string[] = [];
    let text = "";
    const stream = await client.responses.create({ model: "oa", input: "responses stream", stream: true });
    for await (const event of stream) {
      events.push(event.type);
      if (event.type === "response.output_text.delta") text += event.delta;
    }
    expect(text).toBe("You said: responses stream");
    expect(events[0]).toBe("response.created");
    expect(events.at(-1)).toBe("response.completed");

    const tools = [{ type: "function" as const, name: "get_weather", parameters: WEATHER_PARAMS, strict: true }];
    const called = await client.responses.create({ model: "oa", input: "responses tools:get_weather", tools });
    const fc = called.output.find((item) => item.type === "function_call");
    expect(fc).toMatchObject({ name: "get_weather", arguments: '{"city":"Paris"}' });
    const done = await client.responses.create({
      model: "oa",
      tools,
      input: [
        { role: "user", content: "responses tools:get_weather" },
        fc as OpenAI.Responses.ResponseFunctionToolCall,
        { type: "function_call_output", call_id: (fc as { call_id: string }).call_id, output: weather("Paris") },
      ],
    });
    expect(done.output_text).toBe("Tools said: 1 results");
  });

  it("AI SDK: the default openai() provider (Responses API) works, streaming and not", async () => {
    const openai = createOpenAI({ apiKey: TOKEN, baseURL: baseURL() });
    const whole = await generateText({ model: openai("main"), prompt: "echo through responses" });
    expect(whole.text).toBe("echo through responses");
    const streamed = streamText({ model: openai("main"), prompt: "stream through responses" });
    expect(await streamed.text).toBe("stream through responses");
    expect(await streamed.finishReason).toBe("stop");

    const result = await generateText({
      model: openai("oa"),
      prompt: "ai responses tools:get_weather",
      tools: { get_weather: tool({ description: "weather", inputSchema: jsonSchema<{ city: string }>(WEATHER_PARAMS), execute: ({ city }) => Promise.resolve(weather(city)) }) },
      stopWhen: stepCountIs(3),
    });
    expect(result.text).toBe("Tools said: 1 results");
    expect(result.totalUsage).toMatchObject({ inputTokens: 14, outputTokens: 10 });
  });

  it("AI SDK: openai-compatible completes a tool loop, and reports the upstream's usage streaming", async () => {
    const compat = createOpenAICompatible({ name: "gateway", apiKey: TOKEN, baseURL: baseURL(), includeUsage: true });
    const tools = {
      get_weather: tool({ description: "weather", inputSchema: jsonSchema<{ city: string }>(WEATHER_PARAMS), execute: ({ city }) => Promise.resolve(weather(city)) }),
    };
    const whole = await generateText({ model: compat("oa"), prompt: "compat tools:get_weather", tools, stopWhen: stepCountIs(3) });
    expect(whole.text).toBe("Tools said: 1 results");
    expect(whole.steps.map((s) => s.finishReason)).toEqual(["tool-calls", "stop"]);

    const streamed = streamText({ model: compat("oa"), prompt: "compat stream tools:get_weather", tools, stopWhen: stepCountIs(3) });
    expect(await streamed.text).toBe("Tools said: 1 results");
    expect(await streamed.totalUsage).toMatchObject({ inputTokens: 14, outputTokens: 10 });
  });

  it("LangChain: bindTools completes a client-side tool loop, streaming and not", async () => {
    const model = new ChatOpenAI({ model: "oa", apiKey: TOKEN, configuration: { baseURL: baseURL() }, maxRetries: 0 });
    const bound = model.bindTools([{ type: "function", function: { name: "get_weather", description: "weather", parameters: WEATHER_PARAMS } }]);
    for (const stream of [false, true]) {
      const messages: BaseMessage[] = [new HumanMessage(`langchain ${stream} tools:get_weather`)];
      let reply: AIMessage;
      if (stream) {
        let merged: Awaited<ReturnType<typeof bound.invoke>> | undefined;
        for await (const chunk of await bound.stream(messages)) merged = merged === undefined ? chunk : merged.concat(chunk);
        reply = new AIMessage({ content: merged!.content, tool_calls: merged!.tool_calls ?? [] });
      } else reply = await bound.invoke(messages);
      expect(reply.tool_calls).toMatchObject([{ name: "get_weather", args: { city: "Paris" } }]);
      messages.push(reply);
      for (const call of reply.tool_calls ?? []) messages.push(new ToolMessage({ content: weather(String(call.args.city)), tool_call_id: call.id! }));
      const answer = await bound.invoke(messages);
      expect(answer.content).toBe("Tools said: 1 results");
      expect(answer.usage_metadata).toMatchObject({ input_tokens: 7, output_tokens: 5 });
    }
  });

  it("LangChain: useResponsesApi answers through /v1/responses, streaming and not, with a tool loop", async () => {
    const model = new ChatOpenAI({ model: "oa", apiKey: TOKEN, configuration: { baseURL: baseURL() }, maxRetries: 0, useResponsesApi: true });
    expect((await model.invoke("langchain responses")).content).toEqual([expect.objectContaining({ type: "text", text: "You said: langchain responses" })]);
    let streamed = "";
    for await (const chunk of await model.stream("langchain responses stream")) streamed += typeof chunk.content === "string" ? chunk.content : chunk.text;
    expect(streamed).toBe("You said: langchain responses stream");
    const bound = model.bindTools([{ type: "function", function: { name: "get_weather", description: "weather", parameters: WEATHER_PARAMS } }]);
    const messages: BaseMessage[] = [new HumanMessage("langchain responses tools:get_weather")];
    const reply = await bound.invoke(messages);
    expect(reply.tool_calls).toMatchObject([{ name: "get_weather", args: { city: "Paris" } }]);
    messages.push(reply, new ToolMessage({ content: weather("Paris"), tool_call_id: reply.tool_calls![0]!.id! }));
    expect((await bound.invoke(messages)).text).toBe("Tools said: 1 results");
    expect(seenFor(fake, "langchain responses tools").length).toBe(2);
  });

  it("refuses n: 2 with a 400 naming n, and passes sampling parameters through to the provider", async () => {
    const client = sdk();
    const refused = await client.chat.completions.create({ model: "oa", n: 2, messages: [{ role: "user", content: "two answers" }] }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect(refused).toMatchObject({ status: 400, param: "n", message: expect.stringContaining("n") });

    await client.chat.completions.create({
      model: "oa",
      messages: [{ role: "user", content: "sampled request" }],
      temperature: 0.3,
      top_p: 0.5,
      max_completion_tokens: 64,
      stop: ["END"],
      seed: 7,
      response_format: { type: "json_object" },
      user: `sampler-${mode}`,
    });
    expect(seenFor(fake, "sampled request").at(-1)!.body).toMatchObject({
      temperature: 0.3,
      top_p: 0.5,
      max_tokens: 64,
      stop: ["END"],
      seed: 7,
      response_format: { type: "json_object" },
      user: `sampler-${mode}`,
    });
  });

  it("shows no internal URL when the upstream fails: a generic message and the request id", async () => {
    const upstreamHost = new URL(fake.baseUrl).host;
    const client = sdk();
    for (const stream of [false, true]) {
      const res = await fetch(`${baseURL()}/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "oa", stream, messages: [{ role: "user", content: `fail500 ${stream}` }] }),
      });
      const requestId = res.headers.get("x-request-id");
      expect(requestId).toMatch(/^req_[0-9a-f]{32}$/);
      const body = await res.text();
      expect(res.status).toBe(stream ? 200 : 502);
      expect(body).toContain(`the model provider failed (request id ${requestId})`);
      expect(body).not.toContain(upstreamHost);
      // The details are in the log, under that id.
      await expect.poll(() => gw.fullLogs().includes(requestId!), { timeout: 5_000 }).toBe(true);
    }
    const failed = await client.responses.create({ model: "oa", input: "fail500 responses" }).catch((e: unknown) => e);
    expect(failed).toMatchObject({ status: 502 });
    expect(String((failed as Error).message)).not.toContain(upstreamHost);
    const viaAi = await generateText({ model: createOpenAI({ apiKey: TOKEN, baseURL: baseURL() })("oa"), prompt: "fail500 ai", maxRetries: 0 }).catch(
      (e: unknown) => e,
    );
    expect(String((viaAi as Error).message)).toContain("the model provider failed");
    expect(String((viaAi as Error).message)).not.toContain(upstreamHost);
  });

  it("serves models by id and an OpenAI-shaped 404 for unknown /v1 routes", async () => {
    const client = sdk();
    expect(await client.models.retrieve("oa")).toEqual({ id: "oa", object: "model", created: 0, owned_by: "agent-gateway" });
    const missing = await client.models.retrieve("nobody").catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect((await client.models.list()).data.map((m) => m.id)).toEqual(RUN_AGENTS.map((a) => a.id));
    const unknown = await fetch(`${baseURL()}/embeddings`, { method: "POST", headers: { authorization: `Bearer ${TOKEN}` } });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
    const listed = await fetch(`${baseURL()}/models`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(listed.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
    expect(await unknown.json()).toEqual({ error: { message: "unknown endpoint: POST /v1/embeddings", type: "invalid_request_error" } });
  });
});
