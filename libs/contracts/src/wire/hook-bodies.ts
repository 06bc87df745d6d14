import { z } from "zod";
import { AgentIdSchema } from "./methods.js";
import { MAX_WAIT_SECONDS } from "./run-methods.js";
import { sessionKeyProblem } from "./session-key.js";

/**
 * Bodies of the built-in hook endpoints (SPEC §4.2 `POST /hooks/wake`, `POST /hooks/agent`),
 * validated by the edge. Unknown keys are ignored, as for WebSocket params; a present key of the
 * wrong type is refused with its path.
 */

export const HOOK_WAKE_MODES = ["now", "next-heartbeat"] as const;
export type HookWakeMode = (typeof HOOK_WAKE_MODES)[number];

const wakeMode = (field: string) =>
  z.enum(HOOK_WAKE_MODES, { error: `${field} must be "now" or "next-heartbeat"` }).default("now");

/** A text an agent is to act on: whitespace alone is refused, as a mapping's message that renders blank is. */
const nonBlank = (field: string) =>
  z
    .string({ error: `${field} is required (a string)` })
    .min(1, { error: `${field} must not be empty`, abort: true })
    .refine((text) => text.trim() !== "", `${field} must not be only whitespace`);

export const HookWakeBodySchema = z.object({
  text: nonBlank("text"),
  mode: wakeMode("mode"),
});
export type HookWakeBody = z.output<typeof HookWakeBodySchema>;

export const HookSessionKeySchema = z
  .string({ error: "sessionKey must be a string" })
  .superRefine((key, ctx) => {
    const problem = sessionKeyProblem(key);
    if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem });
  });

export const HookAgentBodySchema = z.object({
  message: nonBlank("message"),
  agentId: AgentIdSchema.optional(),
  sessionKey: HookSessionKeySchema.optional(),
  // The sender shown in the session.
  name: z.string().min(1).max(128).optional(),
  deliver: z.boolean().default(true),
  channel: z.string().min(1).max(64).optional(),
  to: z.string().min(1).max(256).optional(),
  model: z.string().min(3).max(256).optional(),
  thinking: z.enum(["low", "medium", "high"], { error: "thinking must be one of low, medium, high" }).optional(),
  wakeMode: wakeMode("wakeMode"),
  // Fractions allowed, as for the WebSocket `agent`; the hooks RPC and the run request carry
  // whole seconds, so a fraction rounds up and the run never gets less than asked.
  timeoutSeconds: z.number().positive().max(MAX_WAIT_SECONDS).transform(Math.ceil).optional(),
});
export type HookAgentBody = z.output<typeof HookAgentBodySchema>;
