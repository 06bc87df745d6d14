import { describe, expect, it } from "vitest";
import { chatRequest } from "./chat-body.js";
import { resolveAgent, runParams } from "./conversation.js";

const agents = (model: string) => resolveAgent(["main", "oa"], model);
const parse = (body: Record<string, unknown>) => chatRequest({ model: "oa", messages: [{ role: "user", content: "hi" }], ...body }, agents);

function refusal(body: Record<string, unknown>): unknown {
  try {
    parse(body);
  } catch (err) {
    return err;
  }
  throw new Error("not refused");
}

describe("chatRequest", () => {
  it("passes the sampling parameters through, max_completion_tokens or max_tokens alike", () => {
    const { request } = parse({
      temperature: 0.1,
      top_p: 0.2,
      max_completion_tokens: 30,
      stop: "END",
      seed: 3,
      presence_penalty: 1,
      frequency_penalty: -1,
      response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "object" } } },
      user: "u",
      parallel_tool_calls: false,
      reasoning_effort: "low",
    });
    expect(request.sampling).toEqual({
      temperature: 0.1,
      topP: 0.2,
      maxTokens: 30,
      stop: ["END"],
      seed: 3,
      presencePenalty: 1,
      frequencyPenalty: -1,
      responseFormatJson: '{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object"}}}',
      user: "u",
      parallelToolCalls: false,
      promptCacheKey: undefined,
      safetyIdentifier: undefined,
    });
    expect(request.thinking).toBe("low");
    expect(parse({ max_tokens: 9 }).request.sampling.maxTokens).toBe(9);
    // null is "not set", as in the OpenAI API.
    expect(parse({ temperature: null, tools: null }).request.sampling.temperature).toBeUndefined();
  });

  it.each([
    [{ n: 2 }, "n"],
    [{ logprobs: true }, "logprobs"],
    [{ store: true }, "store"],
    [{ audio: { voice: "x" } }, "audio"],
    [{ stream_options: { include_usage: true, extra: 1 } }, "stream_options.extra"],
    [{ temperature: 3 }, "temperature"],
    [{ max_tokens: 5, max_completion_tokens: 6 }, "max_tokens"],
    [{ messages: [{ role: "user", content: [{ type: "input_audio", input_audio: {} }] }] }, "messages[0].content[0].type"],
    [{ messages: [{ role: "function", content: "x" }] }, "messages[0].role"],
    [{ messages: [{ role: "tool", content: "x" }] }, "messages[0].tool_call_id"],
    [{ tools: [{ type: "function", function: { name: "has space" } }] }, "tools[0].function.name"],
    [
      { messages: [{ role: "assistant", tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "nope" } }] }] },
      "messages[0].tool_calls[0].function.arguments",
    ],
  ])("refuses %j with a 400 naming %s", (body, param) => {
    expect(refusal(body)).toMatchObject({ code: "INVALID_REQUEST", details: { param } });
  });

  it("refuses an unknown model naming model, and takes agent:<id>", () => {
    expect(refusal({ model: "gpt-4o" })).toMatchObject({ code: "INVALID_REQUEST", details: { param: "model" } });
    expect(parse({ model: "agent:main" }).request.agentId).toBe("main");
  });

  it("continues a turn from tool results: the assistant's calls and the results, named after their tools", () => {
    const { request } = parse({
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: "weather?" },
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }] },
        { role: "tool", tool_call_id: "c1", content: [{ type: "text", text: "sunny" }] },
      ],
      tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object" } } }],
      tool_choice: { type: "function", function: { name: "get_weather" } },
    });
    const params = runParams(request, "run-1");
    expect(params).toMatchObject({ message: "", extraSystemPrompt: "be brief", sessionKey: "openai:ephemeral-run-1" });
    expect(params.ephemeralHistory?.map((m) => [m.role, m.content])).toEqual([["user", "weather?"]]);
    expect(params.openai).toMatchObject({
      clientTools: [{ name: "get_weather", description: "", parametersJson: '{"type":"object"}' }],
      toolChoice: { mode: "function", functionName: "get_weather" },
      toolCallTurn: { role: "assistant", toolCalls: [{ id: "c1", name: "get_weather", arguments: '{"city":"Oslo"}' }] },
      toolResults: [{ role: "tool", toolCallId: "c1", name: "get_weather", content: "sunny" }],
    });
  });

  it("with user, keeps only the turn and scopes the session", () => {
    const { request } = parse({
      user: "bob",
      messages: [
        { role: "user", content: "one" },
        { role: "assistant", content: "two" },
        { role: "user", content: "three" },
      ],
    });
    const params = runParams(request, "run-2");
    expect(params).toMatchObject({ message: "three", sessionKey: "openai:bob", sender: "bob" });
    expect(params.ephemeralHistory).toBeUndefined();
  });
});
