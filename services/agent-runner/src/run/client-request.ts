import { decodeJson, GatewayError, type RunRequest } from "@gw/contracts";
import { z } from "zod";
import type { Sampling, ToolChoice, ToolSpec } from "../providers/model-provider.js";

const JsonObjectSchema = z.record(z.string(), z.unknown());

function jsonObject(text: string, what: string): Record<string, unknown> | undefined {
  return text === "" ? undefined : decodeJson(Buffer.from(text, "utf8"), JsonObjectSchema, what);
}

/** The client's tools as the model sees them; none when `tool_choice` is `none`. */
function clientTools(req: RunRequest, agentTools: ToolSpec[]): ToolSpec[] {
  if (req.toolChoice?.mode === "none") return [];
  const taken = new Set(agentTools.map((t) => t.name));
  return req.clientTools.map((tool) => {
    // A call by that name would run the agent's tool, never reaching the client.
    if (taken.has(tool.name))
      throw new GatewayError("INVALID_REQUEST", `tools: ${tool.name} is the name of one of the agent's own tools`, {
        details: { param: "tools" },
      });
    return {
      name: tool.name,
      description: tool.description,
      parameters: jsonObject(tool.parametersJson, "a client tool's parameters") ?? { type: "object", properties: {} },
    };
  });
}

function toolChoice(req: RunRequest, offered: ToolSpec[]): ToolChoice | undefined {
  const choice = req.toolChoice;
  if (choice === undefined || choice.mode === "" || choice.mode === "auto" || choice.mode === "none") return undefined;
  if (choice.mode === "required") return { mode: "required" };
  if (choice.mode === "function" && offered.some((t) => t.name === choice.functionName)) return { mode: "function", name: choice.functionName };
  throw new GatewayError("INVALID_REQUEST", `tool_choice names no tool offered: ${choice.functionName || choice.mode}`, {
    details: { param: "tool_choice" },
  });
}

function sampling(req: RunRequest): Sampling | undefined {
  const s = req.sampling;
  if (s === undefined) return undefined;
  const out: Sampling = {
    temperature: s.temperature,
    topP: s.topP,
    maxTokens: s.maxTokens,
    stop: s.stop.length ? s.stop : undefined,
    seed: s.seed,
    presencePenalty: s.presencePenalty,
    frequencyPenalty: s.frequencyPenalty,
    responseFormat: s.responseFormatJson === undefined ? undefined : jsonObject(s.responseFormatJson, "response_format"),
    user: s.user,
    parallelToolCalls: s.parallelToolCalls,
    promptCacheKey: s.promptCacheKey,
    safetyIdentifier: s.safetyIdentifier,
  };
  for (const key of Object.keys(out) as Array<keyof Sampling>) if (out[key] === undefined) delete out[key];
  return Object.keys(out).length ? out : undefined;
}

/**
 * What an OpenAI-compatible request adds to the agent loop: the client's tools beside the
 * agent's (`agentTools`), the tool choice for the turn's first model call, and the sampling
 * parameters (docs/decisions.md, OpenAI-compatible HTTP).
 */
export function clientRequest(
  req: RunRequest,
  agentTools: ToolSpec[],
): { clientTools: ToolSpec[]; toolChoice?: ToolChoice; sampling?: Sampling } {
  const tools = clientTools(req, agentTools);
  const choice = toolChoice(req, [...agentTools, ...tools]);
  const params = sampling(req);
  return { clientTools: tools, ...(choice ? { toolChoice: choice } : {}), ...(params ? { sampling: params } : {}) };
}
