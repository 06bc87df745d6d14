import { currentRequestId } from "@gw/bus";
import {
  type AgentParams,
  AgentParamsSchema,
  AgentWaitParamsSchema,
  GatewayError,
  RunAbortParamsSchema,
  type AgentResult,
  type AgentWaitResult,
  type RunRecord,
} from "@gw/contracts";
import type { Logger } from "@gw/runtime";
import { seesErrorDetail } from "../auth/permissions.js";
import { genericMessage, isServerFailure } from "../error-detail.js";
import { checkAttachments, type TextOnlyModel } from "../runs/image-input.js";
import type { RunClient, RunGuard } from "../runs/run-client.js";
import type { CallContext } from "../call-context.js";
import { defineMethod } from "./registry.js";

/** The `agent` response: payloads when the run ended well, else its typed error. */
function agentResponse(record: RunRecord): AgentResult {
  if (record.state === "error") {
    const error = record.error ?? { code: "INTERNAL" as const, message: "the run failed" };
    throw new GatewayError(error.code, error.message, { details: { runId: record.runId } });
  }
  return { runId: record.runId, payloads: record.payloads ?? [], ...routeOf(record) };
}

/** The model that answered and the fallbacks taken, when the run called a model. */
function routeOf(record: RunRecord): Pick<RunRecord, "model" | "fallbacks"> {
  return { ...(record.model ? { model: record.model } : {}), ...(record.fallbacks?.length ? { fallbacks: record.fallbacks } : {}) };
}

type RunError = NonNullable<RunRecord["error"]>;

/**
 * A run's error as `agent.wait` answers it: a server-side failure's words (a provider's URL and
 * host) only for control; others get the catalogue's message with this request's id, and the
 * words go to the log under it (error-detail.ts). The `agent` answer's error goes the same way
 * through the WS error mapper (ws/frames.ts).
 */
function shownError(error: RunError, runId: string, ctx: CallContext, logger: Logger): RunError {
  if (seesErrorDetail(ctx.access) || !isServerFailure(error.code)) return error;
  logger.warn({ runId, code: error.code, reason: error.message }, "run ended with an error");
  return { code: error.code, message: genericMessage(error.code, currentRequestId()) };
}

/** SPEC §4.1 `agent.wait`: `completed` and `result` always; a run still going has no payloads yet. */
function waitResponse(runId: string, record: RunRecord | null, ctx: CallContext, logger: Logger): AgentWaitResult {
  if (record === null) return { runId, completed: false, status: "running", result: { payloads: [] } };
  return {
    runId,
    completed: true,
    status: record.state === "done" ? "ok" : "error",
    result: { payloads: record.payloads ?? [], ...routeOf(record) },
    ...(record.error ? { error: shownError(record.error, runId, ctx, logger) } : {}),
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
export function agentRunMethods(runs: RunClient, logger: Logger, textOnlyModel: TextOnlyModel = () => undefined) {
  const abort = (name: "chat.abort" | "agent.abort") =>
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
        checkAttachments(textOnlyModel, params);
        ctx.watchSession(params.sessionKey);
        return agentResponse(await runs.run(params, { targetId: ctx.connId }));
      },
    }),
    defineMethod({
      name: "agent.wait",
      params: AgentWaitParamsSchema,
      handler: async (params, ctx) =>
        // The waiting socket hears the run's events from now on, as its starter does.
        waitResponse(params.runId, await runs.wait(params.runId, params.timeoutSeconds * 1000, { targetId: ctx.connId }, sessionOf(ctx)), ctx, logger),
    }),
    abort("chat.abort"),
    abort("agent.abort"),
  ];
}
