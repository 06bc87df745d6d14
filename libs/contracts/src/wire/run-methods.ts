import { z } from "zod";
import { AttachmentsParamSchema } from "./image-attachments.js";
import { AgentIdSchema, SessionKeySchema } from "./methods.js";

/** Params of the run methods (SPEC §4.1 `agent`, `agent.wait`, `chat.abort` / `agent.abort`). */

export const RUN_THINKING_LEVELS = ["low", "medium", "high", "extended"] as const;

/** Client-chosen run ids travel in subjects (encoded) and store keys, so keep them bounded. */
export const RunIdSchema = z.string().min(1).max(128);

export const MAX_WAIT_SECONDS = 3_600;

export const AgentParamsSchema = z.object({
  message: z.string().min(1, "message must not be empty").max(262_144),
  sessionKey: SessionKeySchema,
  runId: RunIdSchema.optional(),
  agentId: AgentIdSchema.optional(),
  /** One reference or an ordered fallback chain (runs check it: an unknown provider fails the run). */
  model: z.union([z.string().min(3).max(1_600), z.array(z.string().min(3).max(200)).min(1).max(8)]).transform((m) => (typeof m === "string" ? m : m.join(","))).optional(),
  thinking: z.enum(RUN_THINKING_LEVELS, { error: "thinking must be one of low, medium, high, extended" }).optional(),
  deliver: z.boolean().optional(),
  messageChannel: z.string().min(1).max(64).optional(),
  to: z.string().min(1).max(256).optional(),
  extraSystemPrompt: z.string().max(65_536).optional(),
  /** Fractions allowed, as for agent.wait; the runner's deadline is whole seconds (rounded up). */
  timeoutSeconds: z.number().positive().max(MAX_WAIT_SECONDS).optional(),
  /** Images that come with the message (docs/protocol.md): an https URL or base64 bytes each. */
  attachments: AttachmentsParamSchema.optional(),
});
export type AgentParams = z.infer<typeof AgentParamsSchema>;

export const AgentWaitParamsSchema = z.object({
  runId: RunIdSchema,
  timeoutSeconds: z.number().positive().max(MAX_WAIT_SECONDS).default(300),
});

export const RunAbortParamsSchema = z.object({ runId: RunIdSchema });

/** What `agent.subscribe` and `agent.unsubscribe` name: one run, one session's runs, or every run. */
const subscriptionTarget = {
  runId: RunIdSchema.optional(),
  sessionKey: SessionKeySchema.optional(),
  all: z.literal(true).optional(),
};

function exactlyOneTarget(p: { runId?: string; sessionKey?: string; all?: true }, ctx: z.RefinementCtx): void {
  const named = [p.runId !== undefined, p.sessionKey !== undefined, p.all !== undefined].filter(Boolean).length;
  if (named !== 1) ctx.addIssue({ code: "custom", message: "name exactly one of runId, sessionKey or all: true" });
}

/**
 * `agent.subscribe`: a run's `agent` events (with `afterSeq`: first every kept event after that
 * seq, then the live ones), a session's runs' events, or every run's (`all`, control only).
 */
export const AgentSubscribeParamsSchema = z
  .object({ ...subscriptionTarget, afterSeq: z.number().int().nonnegative().optional() })
  .superRefine((p, ctx) => {
    exactlyOneTarget(p, ctx);
    if (p.afterSeq !== undefined && p.runId === undefined) {
      ctx.addIssue({ code: "custom", path: ["afterSeq"], message: "afterSeq resumes one run: it needs runId" });
    }
  });
export type AgentSubscribeParams = z.infer<typeof AgentSubscribeParamsSchema>;

export const AgentUnsubscribeParamsSchema = z.object(subscriptionTarget).superRefine(exactlyOneTarget);
export type AgentUnsubscribeParams = z.infer<typeof AgentUnsubscribeParamsSchema>;
