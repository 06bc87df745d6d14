import { ERROR_CODE_NAMES, ROLES, RUN_THINKING_LEVELS } from "@gw/contracts";
import { z } from "zod";

/**
 * The shapes the edge answers with, for the API documents only: requests are documented by the
 * very schemas the edge validates with, answers by these (the handlers build them from the bus
 * replies, so there is nothing to validate them against at run time).
 */

const timestamp = z.number().int().describe("milliseconds since the Unix epoch");

export const PayloadItem = z.object({ type: z.string().describe('"text" for text'), text: z.string().optional() });

export const ConnectResult = z.object({
  connId: z.string().describe("random per connection; a pairing signature names it"),
  role: z.enum(ROLES),
  auth: z.object({
    method: z.enum(["loopback", "device", "token", "password", "overlay", "trusted-proxy", "pairing"]),
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

export const AgentsListResult = z.object({
  agents: z.array(z.object({ id: z.string(), name: z.string(), model: z.string(), description: z.string() })),
  defaultAgentId: z.string(),
});

export const AgentIdentity = z.object({
  id: z.string(),
  name: z.string(),
  avatar: z.string().describe("URL"),
  description: z.string(),
});

const RouteFields = {
  model: z.string().optional().describe("<provider>/<model> that answered the run's last model call"),
  fallbacks: z
    .array(z.object({ model: z.string(), key: z.string().describe("the API key's id, never the key"), reason: z.enum(["rate_limit", "server", "timeout"]), status: z.number().optional() }))
    .optional()
    .describe("model calls passed on to the next model of the fallback chain (absent when none)"),
};
export const AgentResult = z.object({ runId: z.string(), payloads: z.array(PayloadItem), ...RouteFields });

export const AgentWaitResult = z.object({
  runId: z.string(),
  completed: z.boolean(),
  status: z.enum(["running", "ok", "error"]),
  result: z.object({ payloads: z.array(PayloadItem), ...RouteFields }).describe("payloads is empty while the run is still going"),
  error: z.object({ code: z.enum(ERROR_CODE_NAMES), message: z.string() }).optional(),
});

export const RunAbortResult = z.object({ runId: z.string(), aborted: z.boolean() });

const subscriptionNames = {
  runId: z.string().optional(),
  sessionKey: z.string().optional(),
  all: z.literal(true).optional(),
};
export const AgentSubscribeResult = z.object({
  subscribed: z.boolean().describe("false when the run is over: nothing more will come"),
  ...subscriptionNames,
  status: z.enum(["queued", "running", "ok", "error"]).optional().describe("a run subscription: the run's state"),
  lastSeq: z.number().optional().describe("with afterSeq: the seq of the last event sent before this answer"),
});
export const AgentUnsubscribeResult = z.object({ unsubscribed: z.boolean(), ...subscriptionNames });

const sessionSummaryFields = {
  key: z.string(),
  agentId: z.string(),
  model: z.string(),
  createdAt: timestamp,
  updatedAt: timestamp,
  messageCount: z.number().int(),
  thinking: z.enum(RUN_THINKING_LEVELS).optional().describe("only when set"),
};

export const SessionsListResult = z.object({ sessions: z.array(z.object(sessionSummaryFields)), total: z.number().int() });

export const SessionsPreviewResult = z.object({
  ...sessionSummaryFields,
  messages: z
    .array(
      z.object({
        type: z.literal("message"),
        id: z.string(),
        parentId: z.string().describe("empty for the first message"),
        role: z.string().describe("user, assistant, ..."),
        sender: z.string(),
        body: z.string(),
        timestamp,
        kind: z.string(),
      }),
    )
    .describe("most recent first"),
});

const changes = z.record(z.string(), z.unknown()).describe("the changed fields and their new values");

export const SessionsPatchResult = z.object({ updated: z.boolean(), changes });
export const SessionsResetResult = z.object({ reset: z.boolean() });
export const SessionsDeleteResult = z.object({ deleted: z.boolean() });
export const SessionsCompactResult = z.object({ compacted: z.boolean(), beforeSize: z.number(), afterSize: z.number() });
export const SessionsSubscribeResult = z.object({ subscribed: z.literal(true), key: z.string() });
export const SessionsUnsubscribeResult = z.object({ unsubscribed: z.literal(true), key: z.string() });

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
export const SessionUpdatedEvent = z.object({ key: z.string(), changes });
export const ShutdownEvent = z.object({
  reason: z.string(),
  reconnectAfterMs: z.number().describe("open a new connection (to any edge) after this long; keep this one until it closes"),
  closesBy: z.number().describe("when this edge closes its sockets (close code 1012) at the latest, ms since the epoch"),
});

export const DeliveryResult = z.object({
  sent: z.literal(true),
  messageId: z.string().describe("the platform's id of the first message"),
  messageIds: z.array(z.string()).describe("every platform message, in order (long texts and albums are several)"),
  channel: z.string(),
  accountId: z.string(),
  to: z.string().describe("the recipient as the channel normalised it"),
  cached: z.literal(true).optional().describe("an earlier request with this idempotencyKey produced this result"),
});

const nullableMs = z.number().int().nullable();

export const ChannelsStatusResult = z.object({
  channels: z.array(
    z.object({
      id: z.string(),
      kind: z.string(),
      default: z.boolean(),
      polls: z.boolean(),
      textChunk: z.number().int(),
      accounts: z.array(
        z.object({
          accountId: z.string(),
          configured: z.boolean(),
          reachable: z.boolean(),
          identity: z.string().nullable(),
          probedAt: nullableMs,
          lastSuccessAt: nullableMs,
          lastError: z.string().nullable(),
          lastErrorAt: nullableMs,
          rateLimitedUntil: nullableMs,
          lastInboundAt: nullableMs,
          lastInboundError: z.string().nullable(),
          lastInboundErrorAt: nullableMs,
          lastRoutes: z
            .array(
              z.object({
                chat: z.string(),
                threadId: z.string().nullable().describe("the thread or topic; null outside threads"),
                agentId: z.string().describe("the agent that answered"),
                binding: z.number().int().nullable().describe("the index in the config's bindings that chose the agent; null: the channel's own agent"),
                at: timestamp,
              }),
            )
            .describe("the last chats that got a turn through this account (at most 20, most recent first)"),
        }),
      ),
    }),
  ),
});

const PairingRequestView = z.object({
  channel: z.string(),
  accountId: z.string(),
  sender: z.string().describe("the sender's platform id, as allowFrom lists it"),
  senderName: z.string(),
  code: z.string().describe("the code the bot sent to the sender, e.g. ABCD-EFGH"),
  requestedAt: timestamp,
  expiresAt: timestamp,
});

export const ChannelsPairingListResult = z.object({ requests: z.array(PairingRequestView) });

export const ChannelsPairingApproveResult = PairingRequestView.extend({ approved: z.literal(true) });
export const ChannelsPairingRejectResult = PairingRequestView.extend({ rejected: z.literal(true) });

export const ApiSendResult = z.object({
  id: z.union([z.number(), z.string(), z.null()]),
  ok: z.literal(true),
  payload: DeliveryResult,
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

const RunInFlight = z.object({
  runId: z.string(),
  sessionKey: z.string(),
  agentId: z.string(),
  status: z.enum(["queued", "running", "stalled"]).describe("stalled: running, but its runner stopped reporting (it died; the run ends once noticed)"),
  startedAt: z.number().describe("epoch ms the run was registered"),
  updatedAt: z.number(),
  edgeId: z.string().describe("the edge (or hooks/delivery replica) that started it"),
  runner: z.string().nullable().describe("the runner holding it; null while queued"),
});
export const RunsListResult = z.object({ runs: z.array(RunInFlight) });

export const GatewayStatusResult = z.object({
  version: z.string(),
  edgeId: z.string().describe("the edge that answered"),
  edges: z.array(
    z.object({
      edgeId: z.string(),
      version: z.string(),
      startedAt: z.number(),
      seenAt: z.number().describe("epoch ms of its last heartbeat (every 5 s; gone after 20 s without)"),
      connections: z.number(),
      draining: z.boolean(),
    }),
  ),
  services: z.array(
    z.object({
      service: z.enum(["agent-runner", "sessions", "delivery"]),
      ready: z.boolean(),
      error: z.string().nullable(),
    }),
  ),
  hooks: z.object({ enabled: z.boolean() }),
  channels: z
    .object({
      channels: z.number(),
      accounts: z.number(),
      reachable: z.number(),
      withErrors: z.number(),
      byChannel: z.array(z.object({ id: z.string(), kind: z.string(), accounts: z.number(), reachable: z.number() })),
    })
    .nullable()
    .describe("null when delivery did not answer"),
  runs: z.object({ inFlight: z.number(), atLeast: z.boolean(), queued: z.number(), running: z.number(), stalled: z.number() }),
});

const cooling = z.enum(["ready", "cooling"]);
export const ModelsStatusResult = z.object({
  providers: z.array(
    z.object({
      name: z.string().describe('a key of models.providers, or "builtin"'),
      kind: z.enum(["openai", "anthropic", "builtin"]),
      state: cooling.describe("cooling: runs skip it while another model of their chain is ready"),
      coolingMs: z.number().describe("ms left of the provider's cooldown (after repeated 5xx or timeouts)"),
      failures: z.number().describe("5xx and timeouts in the current one-minute window (3 cool the provider)"),
      keys: z.array(
        z.object({
          id: z.string().describe('first 8 hex digits of the key\'s SHA-256 ("-": no key), never the key'),
          state: cooling,
          coolingMs: z.number().describe("ms left of the key's cooldown (after a 429)"),
          rateLimits: z.number().describe("429s in a row, remembered 10 minutes"),
        }),
      ),
    }),
  ),
});
