import { z } from "zod";
import { sessionKeyProblem } from "./session-key.js";

/** Params of every WebSocket RPC method (SPEC §4.1), validated once at the edge. */

export const ROLES = ["control", "node", "webchat"] as const;
export type Role = (typeof ROLES)[number];

const secret = z.string().min(1).max(4096);

export const ConnectParamsSchema = z
  .object({
    role: z.enum(ROLES, { error: "role must be one of control, node, webchat" }),
    auth: z.object({ token: secret.optional(), password: secret.optional() }).optional(),
    client: z.object({ name: z.string().min(1).max(128), version: z.string().min(1).max(64) }).optional(),
    /** A device without a credential yet: the connection may only ask to be paired (node.pair.request). */
    pairing: z.boolean().optional(),
  })
  .superRefine((params, ctx) => {
    if (params.pairing !== true) return;
    if (params.role !== "node") ctx.addIssue({ code: "custom", path: ["pairing"], message: "pairing is for role node only" });
    if (params.auth?.token !== undefined || params.auth?.password !== undefined) {
      ctx.addIssue({ code: "custom", path: ["pairing"], message: "a pairing connection presents no credential" });
    }
  });
export type ConnectParams = z.infer<typeof ConnectParamsSchema>;

export const AgentIdSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9][a-z0-9_-]*$/, "agentId must be lowercase letters, digits, '_' or '-'");

export const AgentsListParamsSchema = z.object({});

export const AgentIdentityGetParamsSchema = z.object({ agentId: AgentIdSchema.optional() });

/** Upper bounds the spec leaves open (docs/decisions.md, Sessions). */
export const SESSIONS_LIST_MAX_LIMIT = 500;
export const SESSIONS_LIST_MAX_OFFSET = 1_000_000;
export const SESSIONS_PREVIEW_MAX_LIMIT = 200;
export const THINKING_LEVELS = ["low", "medium", "high"] as const;

export const SessionKeySchema = z
  .string()
  .superRefine((key, ctx) => {
    const problem = sessionKeyProblem(key);
    if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem });
  })
  // The refinement has no JSON Schema form: the API documents carry its rule as prose.
  .describe(
    "<prefix>:<identifier>; prefix 1-64 of A-Z a-z 0-9 _ . - (a category or a channel id), identifier not empty; at most 512 UTF-8 bytes, no control characters",
  );

const boundedInt = (min: number, max: number) =>
  z
    .number()
    .int(`must be an integer between ${min} and ${max}`)
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`);

export const ModelRefSchema = z
  .string()
  .max(200)
  .regex(/^[a-z0-9][a-z0-9_-]*\/\S+$/, 'model must look like "<provider>/<model>"');

/** Most models one fallback chain may list. */
export const MAX_MODEL_CHAIN = 8;

/**
 * One model reference or an ordered fallback chain: a list, or its one-string form "a/x,b/y"
 * (what sessions and runs keep and return). The run uses the first not cooling down and moves
 * to the next on a retryable failure before any output.
 */
const isModelChain = (chain: string) => {
  const refs = chain.split(",");
  return refs.length <= MAX_MODEL_CHAIN && refs.every((ref) => ModelRefSchema.safeParse(ref).success);
};

export const ModelChainSchema = z
  .union([
    z.string().refine(isModelChain, `model must look like "<provider>/<model>" (or list at most ${MAX_MODEL_CHAIN} of them)`),
    z
      .array(ModelRefSchema.refine((ref) => !ref.includes(","), "a model reference holds no comma"))
      .min(1, "model must list at least one model")
      .max(MAX_MODEL_CHAIN, `model may list at most ${MAX_MODEL_CHAIN} models`),
  ])
  .transform((model) => (typeof model === "string" ? model : model.join(",")));

export const SessionsListParamsSchema = z.object({
  agentId: AgentIdSchema.optional(),
  limit: boundedInt(1, SESSIONS_LIST_MAX_LIMIT).default(50),
  offset: boundedInt(0, SESSIONS_LIST_MAX_OFFSET).default(0),
});

export const SessionsPreviewParamsSchema = z.object({
  key: SessionKeySchema,
  limit: boundedInt(1, SESSIONS_PREVIEW_MAX_LIMIT).default(20),
});

export const SessionsPatchParamsSchema = z
  .object({
    key: SessionKeySchema,
    agentId: AgentIdSchema.optional(),
    model: ModelChainSchema.optional(),
    thinking: z.enum(THINKING_LEVELS, { error: "thinking must be one of low, medium, high" }).optional(),
  })
  .refine((p) => p.agentId !== undefined || p.model !== undefined || p.thinking !== undefined, {
    message: "give at least one of agentId, model, thinking",
  });

/** sessions.reset, sessions.delete, sessions.compact, sessions.subscribe, sessions.unsubscribe. */
export const SessionKeyParamsSchema = z.object({ key: SessionKeySchema });
