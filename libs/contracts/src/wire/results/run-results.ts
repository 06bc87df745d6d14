import { z } from "zod";
import { ERROR_CODE_NAMES } from "../../errors.js";
import { PayloadItemSchema, RouteFallbackSchema } from "../../run-record.js";
import { ROLES } from "../methods.js";

/** Answers of `connect`, the agent methods and the run methods (SPEC §4.1). */

export const AUTH_METHODS = ["loopback", "device", "token", "password", "overlay", "trusted-proxy", "pairing"] as const;
export type AuthMethod = (typeof AUTH_METHODS)[number];

export const ConnectResultSchema = z.object({
  connId: z.string().describe("random per connection; a pairing signature names it"),
  role: z.enum(ROLES),
  auth: z.object({
    method: z.enum(AUTH_METHODS),
    deviceId: z.string().optional().describe("when a device token authenticated the connection"),
  }),
  session: z
    .object({ key: z.string().describe("webchat:<owner>") })
    .optional()
    .describe("webchat only: the connection may use this session key and <key>:<name>, no others"),
  methods: z.array(z.string()).describe("every method this connection may call, connect included"),
  protocol: z.literal(1),
  server: z.object({ name: z.string(), version: z.string(), edgeId: z.string() }),
  limits: z.object({ maxFrameBytes: z.number().int() }),
});
export type ConnectResult = z.infer<typeof ConnectResultSchema>;

export const AgentEntrySchema = z.object({ id: z.string(), name: z.string(), model: z.string(), description: z.string() });
export type AgentEntry = z.infer<typeof AgentEntrySchema>;

export const AgentsListResultSchema = z.object({ agents: z.array(AgentEntrySchema), defaultAgentId: z.string() });

export const AgentIdentityResultSchema = z.object({
  id: z.string(),
  name: z.string(),
  avatar: z.string().describe("URL"),
  description: z.string(),
});

const routeFields = {
  model: z.string().optional().describe("<provider>/<model> that answered the run's last model call"),
  fallbacks: z
    .array(RouteFallbackSchema.extend({ key: z.string().describe("the API key's id, never the key") }))
    .optional()
    .describe("model calls passed on to the next model of the fallback chain (absent when none)"),
};

export const AgentResultSchema = z.object({ runId: z.string(), payloads: z.array(PayloadItemSchema), ...routeFields });
export type AgentResult = z.infer<typeof AgentResultSchema>;

export const RunErrorSchema = z.object({ code: z.enum(ERROR_CODE_NAMES), message: z.string() });

export const AgentWaitResultSchema = z.object({
  runId: z.string(),
  completed: z.boolean(),
  status: z.enum(["running", "ok", "error"]),
  result: z.object({ payloads: z.array(PayloadItemSchema), ...routeFields }).describe("payloads is empty while the run is still going"),
  error: RunErrorSchema.optional(),
});
export type AgentWaitResult = z.infer<typeof AgentWaitResultSchema>;

export const RunAbortResultSchema = z.object({ runId: z.string(), aborted: z.boolean() });

const subscriptionNames = {
  runId: z.string().optional(),
  sessionKey: z.string().optional(),
  all: z.literal(true).optional(),
};

export const AgentSubscribeResultSchema = z.object({
  subscribed: z.boolean().describe("false when the run is over: nothing more will come"),
  ...subscriptionNames,
  status: z.enum(["queued", "running", "ok", "error"]).optional().describe("a run subscription: the run's state"),
  lastSeq: z.number().optional().describe("with afterSeq: the seq of the last event sent before this answer"),
});
export type AgentSubscribeResult = z.infer<typeof AgentSubscribeResultSchema>;

export const AgentUnsubscribeResultSchema = z.object({ unsubscribed: z.boolean(), ...subscriptionNames });
export type AgentUnsubscribeResult = z.infer<typeof AgentUnsubscribeResultSchema>;
