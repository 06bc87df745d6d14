import type { RunRecord } from "@gw/contracts";
import type { FastifyReply } from "fastify";
import { describe, expect, it } from "vitest";
import { resolveAgent, runParams } from "./conversation.js";
import { outputItems, responseObject } from "./response-object.js";
import { responsesRequest } from "./responses-body.js";
import { ResponseStream } from "./responses-stream.js";

const agents = (model: string) => resolveAgent(["main", "oa"], model);

function refusal(body: Record<string, unknown>): unknown {
  try {
    responsesRequest({ model: "oa", input: "hi", ...body }, agents);
  } catch (err) {
    return err;
  }
  throw new Error("not refused");
}

const record = (extra: Partial<RunRecord>): RunRecord => ({
  runId: "r",
  sessionKey: "s",
  agentId: "oa",
  state: "done",
  edgeId: "e",
  createdAt: 1,
  updatedAt: 2,
  payloads: [{ type: "text", text: "" }],
  ...extra,
});

describe("responsesRequest", () => {
  it("reads input items: instructions and system items, messages, and function calls joining the assistant turn", () => {
    const { request } = responsesRequest(
      {
        model: "oa",
        instructions: "be brief",
        input: [
          { role: "developer", content: "no jokes" },
          { role: "user", content: [{ type: "input_text", text: "weather?" }] },
          { type: "message", role: "assistant", content: [{ type: "output_text", text: "checking" }] },
          { type: "function_call", call_id: "c1", name: "get_weather", arguments: '{"city":"Oslo"}' },
          { type: "function_call", call_id: "c2", name: "get_weather", arguments: "" },
          { type: "function_call_output", call_id: "c1", output: "sunny" },
          { type: "function_call_output", call_id: "c2", output: [{ type: "input_text", text: "rainy" }] },
        ],
        text: { format: { type: "json_schema", name: "w", schema: { type: "object" } } },
        max_output_tokens: 40,
        reasoning: { effort: "high" },
      },
      agents,
    );
    const params = runParams(request, "run-1");
    expect(params.extraSystemPrompt).toBe("be brief\n\nno jokes");
    expect(params.thinking).toBe("high");
    expect(params.openai?.toolCallTurn).toMatchObject({
      role: "assistant",
      content: "checking",
      toolCalls: [
        { id: "c1", name: "get_weather", arguments: '{"city":"Oslo"}' },
        { id: "c2", name: "get_weather", arguments: "{}" },
      ],
    });
    expect(params.openai?.toolResults.map((r) => [r.toolCallId, r.name, r.content])).toEqual([
      ["c1", "get_weather", "sunny"],
      ["c2", "get_weather", "rainy"],
    ]);
    expect(params.openai?.sampling).toMatchObject({
      maxTokens: 40,
      responseFormatJson: '{"type":"json_schema","json_schema":{"name":"w","schema":{"type":"object"}}}',
    });
  });

  it("accepts what the official SDKs send by default, and echoes the labels in the response", () => {
    const defaults = {
      include: [],
      store: false,
      metadata: { team: "a" },
      truncation: "disabled",
      prompt_cache_key: "k",
      safety_identifier: "u-1",
      service_tier: "auto",
      text: { format: { type: "text" } },
      tool_choice: "auto",
      parallel_tool_calls: true,
      reasoning: { effort: "low", summary: "auto" },
    };
    const { body } = responsesRequest({ model: "oa", input: "hi", ...defaults }, agents);
    expect(responsesRequest({ model: "oa", input: "hi", include: ["reasoning.encrypted_content"] }, agents).body.include).toEqual([
      "reasoning.encrypted_content",
    ]);
    const response = responseObject({ id: "resp_1", createdAt: 1, body }, "completed", []);
    expect(response).toMatchObject({ metadata: { team: "a" }, prompt_cache_key: "k", safety_identifier: "u-1", store: false });
  });

  it("continues a stored conversation with the new turn only: function_call_output items answer calls the session holds", () => {
    const input = [{ type: "function_call_output", call_id: "c1", output: "sunny" }];
    const { request } = responsesRequest({ model: "oa", input, previous_response_id: "resp_1" }, agents);
    const params = runParams(request, "r", "responses:resp_1");
    expect(params.sessionKey).toBe("responses:resp_1");
    expect(params.ephemeralHistory).toBeUndefined();
    expect(params.openai?.toolResults.map((r) => [r.toolCallId, r.content])).toEqual([["c1", "sunny"]]);
    // Earlier items belong to the stored conversation: sending them again is refused, not dropped.
    const again = responsesRequest({ model: "oa", input: [{ role: "user", content: "a" }, { role: "assistant", content: "b" }, { role: "user", content: "c" }] }, agents);
    expect(() => runParams(again.request, "r", "responses:resp_1")).toThrow(expect.objectContaining({ details: { param: "input" } }));
    // Stateless, a result with no call before it is still refused.
    expect(() => runParams(request, "r")).toThrow(expect.objectContaining({ details: { param: "input[0]" } }));
  });

  it.each([
    [{ include: ["no.such.thing"] }, "include[0]"],
    [{ metadata: { k: 1 } }, "metadata.k"],
    [{ background: true }, "background"],
    [{ input: [{ type: "item_reference", id: "msg_1" }] }, "input[0].type"],
    [{ input: [{ role: "user", content: [{ type: "input_file", file_id: "file_1" }] }] }, "input[0].content[0].type"],
    [{ tools: [{ type: "web_search" }] }, "tools[0].type"],
  ])("refuses %j with a 400 naming %s", (body, param) => {
    expect(refusal(body)).toMatchObject({ code: "INVALID_REQUEST", details: { param } });
  });

  it("refuses a function_call_output that answers no call before it, when the run is built", () => {
    const input = [{ role: "user", content: "hi" }, { type: "function_call_output", call_id: "zz", output: "x" }];
    const { request } = responsesRequest({ model: "oa", input }, agents);
    expect(() => runParams(request, "r")).toThrow(expect.objectContaining({ details: { param: "input[1]" } }));
  });
});

describe("the response object and its stream", () => {
  const head = { id: "resp_x", createdAt: 5, body: responsesRequest({ model: "oa", input: "hi" }, agents).body };

  it("answers a run's text as a message item and the client's tool calls as function_call items", () => {
    const done = record({ payloads: [{ type: "text", text: "hello" }], usage: { inputTokens: 3, outputTokens: 4 } });
    expect(responseObject(head, "completed", outputItems(done), { record: done })).toMatchObject({
      id: "resp_x",
      object: "response",
      status: "completed",
      output: [{ type: "message", role: "assistant", content: [{ type: "output_text", text: "hello" }] }],
      usage: { input_tokens: 3, output_tokens: 4, total_tokens: 7 },
    });
    const called = record({ toolCalls: [{ id: "c1", name: "get_weather", arguments: "{}" }], finishReason: "tool_calls" });
    expect(outputItems(called)).toEqual([
      { type: "function_call", id: expect.stringMatching(/^fc_/), call_id: "c1", name: "get_weather", arguments: "{}", status: "completed" },
    ]);
  });

  it("streams typed events in order, each with its sequence number, ending with response.completed", () => {
    const written: string[] = [];
    const reply = { raw: { write: (text: string) => written.push(text) } } as unknown as FastifyReply;
    const stream = new ResponseStream(reply, head);
    stream.start();
    stream.text("hel");
    stream.text("lo");
    stream.finish(record({ payloads: [{ type: "text", text: "hello" }], toolCalls: [{ id: "c1", name: "f", arguments: "{}" }] }));
    const events = written.map((w) => {
      const [eventLine, dataLine] = w.trim().split("\n");
      const data = JSON.parse(dataLine!.slice("data: ".length)) as { type: string; sequence_number: number };
      expect(eventLine).toBe(`event: ${data.type}`);
      return data;
    });
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.map((e) => e.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(events.at(-1)).toMatchObject({ response: { status: "completed", output: [{ type: "message" }, { type: "function_call" }] } });
  });
});
