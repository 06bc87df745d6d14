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

/** A model call the run passed on to the next model of its fallback chain, and why. */
export const RouteFallbackSchema = z.object({
  model: z.string(),
  /** The API key's id (8 hex digits of its SHA-256, "-" keyless), never the key. */
  key: z.string(),
  reason: z.enum(["rate_limit", "server", "timeout"]),
  status: z.number().optional(),
});
export type RouteFallback = z.infer<typeof RouteFallbackSchema>;

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
  /** `<provider>/<model>` that answered the run's last model call. */
  model: z.string().optional(),
  /** The fallbacks its model calls took, in order; absent when none. */
  fallbacks: z.array(RouteFallbackSchema).optional(),
  /** Ids of the messages handed to the run while it ran (its inbox, steer mode) that it read. */
  steered: z.array(z.string()).optional(),
});
export type RunRecord = z.infer<typeof RunRecordSchema>;

/**
 * A message handed to a run after it was started (issue 26 §1; libs/runs run-inbox.ts):
 * - `steer`: a person's message that arrived while the run was going; the run reads it at its
 *   next model call (after the current tool results) and lists its id in its record's `steered`;
 * - `context`: an older message the run's starter left out of the turn's input (a queue cap); the
 *   run stores it in the session before its own message and never gives it to the model.
 */
export const InboxEntrySchema = z.object({
  id: z.string(),
  kind: z.enum(["steer", "context"]),
  text: z.string(),
  sender: z.string(),
  /** Epoch ms it arrived: the inbox's order. */
  at: z.number(),
});
export type InboxEntry = z.infer<typeof InboxEntrySchema>;

export function isFinal(state: RunState): boolean {
  return state === "done" || state === "error";
}
