import { z } from "zod";
import { ERROR_CATALOGUE, type ErrorCodeName } from "./errors.js";

/**
 * A run's record as the run registry (libs/runs) keeps it and a terminal event carries it. The
 * schema is how every reader takes it back from JSON (the FastStore, `ClientEvent.final_record_json`).
 */

export const RUN_STATES = ["queued", "running", "done", "error"] as const;
export type RunState = (typeof RUN_STATES)[number];

const ErrorCodeNameSchema = z.custom<ErrorCodeName>(
  (value) => typeof value === "string" && Object.hasOwn(ERROR_CATALOGUE, value),
  { error: "unknown error code" },
);

export const PayloadItemSchema = z.object({ type: z.literal("text"), text: z.string() });
export type PayloadItem = z.infer<typeof PayloadItemSchema>;

/** Why the run's last model call stopped (OpenAI `finish_reason`). */
export const FINISH_REASONS = ["stop", "length", "tool_calls", "content_filter"] as const;
export type FinishReason = (typeof FINISH_REASONS)[number];

/** A call to one of the client's own tools that the run ended with; `arguments` is JSON text. */
export const ClientToolCallSchema = z.object({ id: z.string(), name: z.string(), arguments: z.string() });
export type ClientToolCall = z.infer<typeof ClientToolCallSchema>;

/** Tokens the provider reported, summed over every model call of the run. */
export const RunUsageSchema = z.object({ inputTokens: z.number(), outputTokens: z.number() });
export type RunUsage = z.infer<typeof RunUsageSchema>;

export const RunRecordSchema = z.object({
  runId: z.string(),
  sessionKey: z.string(),
  agentId: z.string(),
  state: z.enum(RUN_STATES),
  /** The runner holding the run (for logs; abort is a broadcast). */
  owner: z.string().optional(),
  edgeId: z.string(),
  /** Matches the dispatched RunRequest's nonce; absent on records made before it existed. */
  nonce: z.string().optional(),
  createdAt: z.number(),
  updatedAt: z.number(),
  payloads: z.array(PayloadItemSchema).optional(),
  error: z.object({ code: ErrorCodeNameSchema, message: z.string() }).optional(),
  finishReason: z.enum(FINISH_REASONS).optional(),
  /** Present when the run stopped for the client to run its own tools (finishReason `tool_calls`). */
  toolCalls: z.array(ClientToolCallSchema).optional(),
  usage: RunUsageSchema.optional(),
});
export type RunRecord = z.infer<typeof RunRecordSchema>;

export function isFinal(state: RunState): boolean {
  return state === "done" || state === "error";
}
