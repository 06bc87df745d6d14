import {
  AgentParamsSchema,
  AgentWaitParamsSchema,
  GatewayError,
  RunAbortParamsSchema,
  type RunRecord,
} from "@gw/contracts";
import type { RunClient } from "../runs/run-client.js";
import { defineMethod } from "./registry.js";

const ALL_ROLES = ["control", "node", "webchat"] as const;

/** The `agent` response: payloads when the run ended well, else its typed error. */
function agentResponse(record: RunRecord): Record<string, unknown> {
  if (record.state === "error") {
    const error = record.error ?? { code: "INTERNAL" as const, message: "the run failed" };
    throw new GatewayError(error.code, error.message, { details: { runId: record.runId } });
  }
  return { runId: record.runId, payloads: record.payloads ?? [] };
}

function waitResponse(runId: string, record: RunRecord | null): Record<string, unknown> {
  if (record === null) return { runId, completed: false, status: "running" };
  return {
    runId,
    completed: true,
    status: record.state === "done" ? "ok" : "error",
    result: { payloads: record.payloads ?? [] },
    ...(record.error ? { error: record.error } : {}),
  };
}

/** SPEC §4.1 `agent`, `agent.wait`, `chat.abort` and its alias `agent.abort`. */
export function agentRunMethods(runs: RunClient) {
  const abort = (name: string) =>
    defineMethod({
      name,
      params: RunAbortParamsSchema,
      roles: ALL_ROLES,
      handler: async (params) => ({ runId: params.runId, aborted: await runs.abort(params.runId) }),
    });
  return [
    defineMethod({
      name: "agent",
      params: AgentParamsSchema,
      roles: ALL_ROLES,
      handler: async (params, ctx) => {
        ctx.watchSession(params.sessionKey);
        return agentResponse(await runs.run(params, { targetId: ctx.connId }));
      },
    }),
    defineMethod({
      name: "agent.wait",
      params: AgentWaitParamsSchema,
      roles: ALL_ROLES,
      handler: async (params) =>
        waitResponse(params.runId, await runs.wait(params.runId, params.timeoutSeconds * 1000)),
    }),
    abort("chat.abort"),
    abort("agent.abort"),
  ];
}
