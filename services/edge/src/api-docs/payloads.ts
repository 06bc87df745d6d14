import { DeliveryResultSchema, ERROR_CODE_NAMES, SessionChangesSchema } from "@gw/contracts";
import { z } from "zod";

/**
 * The shapes of the events, HTTP answers and error frames, for the API documents only. What each
 * WebSocket method answers is @gw/contracts' METHOD_RESULTS (the handlers are typed by it).
 */

export const AgentEvent = z.object({
  runId: z.string(),
  seq: z.number().describe("the event's number in its run, from 1; agent.subscribe resumes after it"),
  stream: z.enum(["assistant", "tool", "lifecycle"]),
  data: z
    .record(z.string(), z.unknown())
    .describe(
      "assistant: { type: text, text }; tool: { phase: start | result | error, toolCallId, name, input | result | error }; lifecycle: { phase: start | thinking | end | error }",
    ),
});
export const SessionCreatedEvent = z.object({ key: z.string(), agentId: z.string() });
export const SessionUpdatedEvent = z.object({ key: z.string(), changes: SessionChangesSchema });
export const ShutdownEvent = z.object({
  reason: z.string(),
  reconnectAfterMs: z.number().describe("open a new connection (to any edge) after this long; keep this one until it closes"),
  closesBy: z.number().describe("when this edge closes its sockets (close code 1012) at the latest, ms since the epoch"),
});

export const ApiSendResult = z.object({
  id: z.union([z.number(), z.string(), z.null()]),
  ok: z.literal(true),
  payload: DeliveryResultSchema,
  meta: z.object({ cached: z.literal(true) }).optional(),
});

export const WsErrorFrame = z.object({
  id: z.union([z.number(), z.string(), z.null()]).describe("the request's id, or null when the frame had none usable"),
  ok: z.literal(false),
  error: z.object({
    code: z.enum(ERROR_CODE_NAMES),
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  }),
});

export const HttpErrorBody = z.object({
  error: z.object({
    message: z.string(),
    type: z.enum(["invalid_request_error", "authentication_error", "rate_limited", "api_error"]),
    param: z.string().optional().describe("the request parameter at fault, when one is"),
  }),
});
