import { z } from "zod";

/** Answers of the operator methods (`runs.list`, `gateway.status`, `models.status`; control only). */

export const RunInFlightSchema = z.object({
  runId: z.string(),
  sessionKey: z.string(),
  agentId: z.string(),
  status: z.enum(["queued", "running", "stalled"]).describe("stalled: running, but its runner stopped reporting (it died; the run ends once noticed)"),
  startedAt: z.number().describe("epoch ms the run was registered"),
  updatedAt: z.number(),
  edgeId: z.string().describe("the edge (or hooks/delivery replica) that started it"),
  runner: z.string().nullable().describe("the runner holding it; null while queued"),
});
export type RunInFlight = z.infer<typeof RunInFlightSchema>;

export const RunsListResultSchema = z.object({ runs: z.array(RunInFlightSchema) });

export const EdgeSeenSchema = z.object({
  edgeId: z.string(),
  version: z.string(),
  startedAt: z.number(),
  seenAt: z.number().describe("epoch ms of its last heartbeat (every 5 s; gone after 20 s without)"),
  connections: z.number(),
  draining: z.boolean(),
});
export type EdgeSeen = z.infer<typeof EdgeSeenSchema>;

export const SERVICE_NAMES = ["agent-runner", "sessions", "delivery"] as const;

export const ServiceProbeSchema = z.object({ service: z.enum(SERVICE_NAMES), ready: z.boolean(), error: z.string().nullable() });
export type ServiceProbe = z.infer<typeof ServiceProbeSchema>;

export const ChannelsSummarySchema = z.object({
  channels: z.number(),
  accounts: z.number(),
  reachable: z.number(),
  withErrors: z.number(),
  byChannel: z.array(z.object({ id: z.string(), kind: z.string(), accounts: z.number(), reachable: z.number() })),
});
export type ChannelsSummary = z.infer<typeof ChannelsSummarySchema>;

export const GatewayStatusResultSchema = z.object({
  version: z.string(),
  edgeId: z.string().describe("the edge that answered"),
  edges: z.array(EdgeSeenSchema),
  services: z.array(ServiceProbeSchema),
  hooks: z.object({ enabled: z.boolean() }),
  channels: ChannelsSummarySchema.nullable().describe("null when delivery did not answer"),
  runs: z.object({ inFlight: z.number(), atLeast: z.boolean(), queued: z.number(), running: z.number(), stalled: z.number() }),
});
export type GatewayStatusResult = z.infer<typeof GatewayStatusResultSchema>;

const cooling = z.enum(["ready", "cooling"]);

export const ModelKeyStatusSchema = z.object({
  id: z.string().describe('first 8 hex digits of the key\'s SHA-256 ("-": no key), never the key'),
  state: cooling,
  coolingMs: z.number().describe("ms left of the key's cooldown (after a 429)"),
  rateLimits: z.number().describe("429s in a row, remembered 10 minutes"),
});

export const ModelProviderStatusSchema = z.object({
  name: z.string().describe('a key of models.providers, or "builtin"'),
  kind: z.enum(["openai", "anthropic", "builtin"]),
  state: cooling.describe("cooling: runs skip it while another model of their chain is ready"),
  coolingMs: z.number().describe("ms left of the provider's cooldown (after repeated 5xx or timeouts)"),
  failures: z.number().describe("5xx and timeouts in the current one-minute window (3 cool the provider)"),
  keys: z.array(ModelKeyStatusSchema),
});
export type ModelProviderView = z.infer<typeof ModelProviderStatusSchema>;

export const ModelsStatusResultSchema = z.object({ providers: z.array(ModelProviderStatusSchema) });
