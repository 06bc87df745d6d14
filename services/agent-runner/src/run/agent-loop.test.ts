import { createSubjects, InProcessBus } from "@gw/bus";
import { describe, expect, it } from "vitest";
import type { ModelChunk, ModelProvider, ModelRequest, ToolSpec } from "../providers/model-provider.js";
import { timeNowTool } from "../tools/time-now.js";
import { ToolRegistry } from "../tools/tool-registry.js";
import { type LoopInput, runAgentLoop } from "./agent-loop.js";
import { UNANSWERED_CALL } from "./conversation.js";
import { RunEventPublisher } from "./run-event-publisher.js";

/** A provider that plays one scripted turn per call and keeps every request it was sent. */
function scripted(turns: ModelChunk[][]): ModelProvider & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    requests,
    async *stream(request) {
      requests.push(structuredClone(request));
      const turn = turns[requests.length - 1];
      if (turn === undefined) throw new Error("no scripted turn left");
      for (const chunk of turn) yield chunk;
    },
  };
}

const WEATHER: ToolSpec = { name: "get_weather", description: "weather", parameters: { type: "object", properties: {} } };
const usage = (inputTokens: number, outputTokens: number): ModelChunk => ({ type: "usage", inputTokens, outputTokens });
const call = (id: string, name: string): ModelChunk => ({ type: "tool_call", call: { id, name, input: {} } });

function input(provider: ModelProvider, extra: Partial<LoopInput> = {}): LoopInput {
  const bus = new InProcessBus();
  return {
    provider,
    model: "m",
    system: "",
    history: [],
    turn: [{ role: "user", content: "hi" }],
    thinking: undefined,
    toolAllow: ["time.now"],
    tools: new ToolRegistry([timeNowTool]),
    maxToolRounds: 4,
    events: new RunEventPublisher(bus, createSubjects("t"), { runId: "r", sessionKey: "s", edgeId: "e" }),
    ctx: { signal: new AbortController().signal, agentId: "a", sessionKey: "s", runId: "r" },
    ...extra,
  };
}

describe("runAgentLoop with client tools", () => {
  it("offers the client's tools beside the agent's and stops at a client call, after running the agent's calls", async () => {
    const provider = scripted([[{ type: "text", text: "checking" }, call("c1", "time__now"), call("c2", "get_weather"), usage(10, 3)]]);
    const result = await runAgentLoop(input(provider, { clientTools: [WEATHER] }));
    expect(provider.requests[0]!.tools.map((t) => t.name)).toEqual(["time__now", "get_weather"]);
    expect(result.finishReason).toBe("tool_calls");
    expect(result.clientCalls).toEqual([{ id: "c2", name: "get_weather", input: {} }]);
    expect(result.text).toBe("checking");
    // The session keeps both calls and the agent's result; the client's result comes later.
    expect(result.added.map((m) => (m.role === "tool" ? `tool:${m.toolCallId}` : m.role))).toEqual(["user", "assistant", "tool:c1"]);
    expect(result.usage).toEqual({ inputTokens: 10, outputTokens: 3 });
  });

  it("sums usage over every model call and reports the last call's stop reason", async () => {
    const provider = scripted([
      [call("c1", "time__now"), usage(5, 1), { type: "stop", reason: "tool_calls" }],
      [{ type: "text", text: "cut" }, usage(7, 2), { type: "stop", reason: "length" }],
    ]);
    const result = await runAgentLoop(input(provider));
    expect(result).toMatchObject({ text: "cut", finishReason: "length", clientCalls: [], usage: { inputTokens: 12, outputTokens: 3 } });
  });

  it("applies the tool choice to the turn's first model call only, and passes sampling to every call", async () => {
    const provider = scripted([[call("c1", "time__now")], [{ type: "text", text: "done" }]]);
    await runAgentLoop(input(provider, { toolChoice: { mode: "required" }, sampling: { temperature: 0.5 } }));
    expect(provider.requests.map((r) => r.toolChoice)).toEqual([{ mode: "required" }, undefined]);
    expect(provider.requests.map((r) => r.sampling)).toEqual([{ temperature: 0.5 }, { temperature: 0.5 }]);
  });

  it("continues a turn from the client's tool results, and answers calls the client left unanswered", async () => {
    const provider = scripted([[{ type: "text", text: "thanks" }]]);
    const history = [
      { role: "user" as const, content: "hi" },
      {
        role: "assistant" as const,
        content: "",
        toolCalls: [
          { id: "c1", name: "get_weather", input: {} },
          { id: "c2", name: "get_weather", input: { city: "Oslo" } },
        ],
      },
    ];
    const turn = [{ role: "tool" as const, toolCallId: "c1", name: "get_weather", content: "sunny" }];
    const result = await runAgentLoop(input(provider, { history, turn, clientTools: [WEATHER] }));
    expect(result.added.slice(0, 1)).toEqual(turn);
    const sent = provider.requests[0]!.messages;
    expect(sent.slice(2)).toEqual([turn[0], { role: "tool", toolCallId: "c2", name: "get_weather", content: UNANSWERED_CALL, isError: true }]);
  });
});
