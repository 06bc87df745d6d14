import type { RunRequest } from "@gw/contracts";
import { describe, expect, it } from "vitest";
import type { ToolSpec } from "../providers/model-provider.js";
import { clientRequest } from "./client-request.js";

const AGENT_TOOLS: ToolSpec[] = [{ name: "time__now", description: "now", parameters: { type: "object" } }];

function req(extra: Partial<RunRequest>): RunRequest {
  return {
    runId: "r1",
    nonce: "n",
    sessionKey: "s",
    agentId: "main",
    message: "hi",
    timeoutSeconds: 0,
    deliver: false,
    edgeId: "e",
    acceptedAt: 1,
    ephemeral: false,
    history: [],
    clientTools: [],
    toolChoice: undefined,
    sampling: undefined,
    toolCallTurn: undefined,
    toolResults: [],
    attachments: [],
    ...extra,
  };
}

const weather = { name: "get_weather", description: "weather", parametersJson: '{"type":"object","properties":{"city":{"type":"string"}}}' };

describe("clientRequest", () => {
  it("offers the client's tools with their schema, and none when tool_choice is none", () => {
    expect(clientRequest(req({ clientTools: [weather] }), AGENT_TOOLS)).toEqual({
      clientTools: [{ name: "get_weather", description: "weather", parameters: { type: "object", properties: { city: { type: "string" } } } }],
    });
    expect(clientRequest(req({ clientTools: [weather], toolChoice: { mode: "none", functionName: "" } }), AGENT_TOOLS).clientTools).toEqual([]);
  });

  it("refuses a client tool named like one of the agent's, and a tool choice naming no offered tool", () => {
    expect(() => clientRequest(req({ clientTools: [{ ...weather, name: "time__now" }] }), AGENT_TOOLS)).toThrow(/agent's own tools/);
    expect(() => clientRequest(req({ toolChoice: { mode: "function", functionName: "nope" } }), AGENT_TOOLS)).toThrow(/tool_choice/);
    expect(clientRequest(req({ toolChoice: { mode: "function", functionName: "time__now" } }), AGENT_TOOLS).toolChoice).toEqual({
      mode: "function",
      name: "time__now",
    });
  });

  it("keeps only the sampling parameters that were set", () => {
    const sampling = {
      temperature: 0,
      topP: undefined,
      maxTokens: 10,
      stop: [],
      seed: undefined,
      presencePenalty: undefined,
      frequencyPenalty: undefined,
      responseFormatJson: '{"type":"json_object"}',
      user: undefined,
      parallelToolCalls: undefined,
      promptCacheKey: undefined,
      safetyIdentifier: undefined,
    };
    expect(clientRequest(req({ sampling }), AGENT_TOOLS).sampling).toEqual({ temperature: 0, maxTokens: 10, responseFormat: { type: "json_object" } });
    expect(clientRequest(req({ sampling: { ...sampling, promptCacheKey: "k", safetyIdentifier: "u" } }), AGENT_TOOLS).sampling).toMatchObject({
      promptCacheKey: "k",
      safetyIdentifier: "u",
    });
    expect(clientRequest(req({}), AGENT_TOOLS)).toEqual({ clientTools: [] });
  });
});
