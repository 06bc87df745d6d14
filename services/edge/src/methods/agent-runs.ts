import {
  type AgentParams,
  AgentParamsSchema,
  AgentWaitParamsSchema,
  GatewayError,
  RunAbortParamsSchema,
  type RunRecord,
} from "@gw/contracts";
import type { RunClient, RunGuard } from "../runs/run-client.js";
import { type CallContext, defineMethod } from "./registry.js";

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

/** A run is the caller's to wait on or abort when its session is (webchat: only its own). */
const sessionOf = (ctx: CallContext): RunGuard => (record) => ctx.assertSession(record.sessionKey);

/**
 * Sending the answer to someone over a channel is delivery, which is control's (as `send` is):
 * a device or a web chat talks with the agent, it does not message third parties through it.
 */
function assertMayDeliver(params: AgentParams, ctx: CallContext): void {
  if (ctx.access === "control") return;
  if (params.deliver === true || params.messageChannel !== undefined || params.to !== undefined) {
    throw new GatewayError(
      "FORBIDDEN",
      `role ${ctx.access} may not deliver answers to a channel (deliver, messageChannel, to): that is control's, like send`,
    );
  }
}

/** SPEC §4.1 `agent`, `agent.wait`, `chat.abort` and its alias `agent.abort`. */
export function agentRunMethods(runs: RunClient) {
  const abort = (name: string) =>
    defineMethod({
      name,
      params: RunAbortParamsSchema,
      handler: async (params, ctx) => ({ runId: params.runId, aborted: await runs.abort(params.runId, sessionOf(ctx)) }),
    });
  return [
    defineMethod({
      name: "agent",
      params: AgentParamsSchema,
      handler: async (params, ctx) => {
        ctx.assertSession(params.sessionKey);
        assertMayDeliver(params, ctx);
        ctx.watchSession(params.sessionKey);
        return agentResponse(await runs.run(params, { targetId: ctx.connId }));
      },
    }),
    defineMethod({
      name: "agent.wait",
      params: AgentWaitParamsSchema,
      handler: async (params, ctx) =>
        // The waiting socket hears the run's events from now on, as its starter does.
        waitResponse(params.runId, await runs.wait(params.runId, params.timeoutSeconds * 1000, { targetId: ctx.connId }, sessionOf(ctx))),
    }),
    abort("chat.abort"),
    abort("agent.abort"),
  ];
}
