import {
  AgentIdentity,
  AgentIdentityGetRequest,
  AgentsListRequest,
  AgentsListResponse,
  ModelsStatusRequest,
  ModelsStatusResponse,
} from "./gen/gateway/v1/agents.pb.js";
import {
  ChannelsPairingApproveRequest,
  ChannelsPairingApproveResponse,
  ChannelsPairingListRequest,
  ChannelsPairingListResponse,
  ChannelsPairingRejectRequest,
  ChannelsPairingRejectResponse,
  ChannelsStatusRequest,
  ChannelsStatusResponse,
  DeliveryEnqueueRequest,
  DeliveryEnqueueResponse,
  DeliveryPollRequest,
  DeliveryReceipt,
  DeliverySendRequest,
  InboundReply,
  InboundRequest,
} from "./gen/gateway/v1/delivery.pb.js";
import { CronAnswer, CronCall, HookAccepted, HookAgentRequest, HookMappingRequest, HookWakeRequest } from "./gen/gateway/v1/hooks.pb.js";
import { ToolsInvokeRequest, ToolsInvokeResponse, ToolsStatusRequest, ToolsStatusResponse } from "./gen/gateway/v1/runs.pb.js";
import {
  AgentSummarizeRequest,
  AgentSummarizeResponse,
  SessionsAppendRequest,
  SessionsAppendResponse,
  SessionsCompactRequest,
  SessionsCompactResponse,
  SessionsDeleteRequest,
  SessionsDeleteResponse,
  SessionsHistoryRequest,
  SessionsHistoryResponse,
  SessionsListRequest,
  SessionsListResponse,
  SessionsPatchRequest,
  SessionsPatchResponse,
  SessionsPreviewRequest,
  SessionsPreviewResponse,
  SessionsResetRequest,
  SessionsResetResponse,
} from "./gen/gateway/v1/sessions.pb.js";

/**
 * Every bus RPC: which service answers it (its queue group) and its message types.
 * Subjects are `<prefix>.rpc.<service>.<method>` (libs/bus createSubjects).
 */
export const RPC = {
  agentsList: {
    service: "runner",
    method: "agents.list",
    request: AgentsListRequest,
    response: AgentsListResponse,
  },
  agentIdentityGet: {
    service: "runner",
    method: "agent.identity.get",
    request: AgentIdentityGetRequest,
    response: AgentIdentity,
  },
  modelsStatus: {
    service: "runner",
    method: "models.status",
    request: ModelsStatusRequest,
    response: ModelsStatusResponse,
  },
  toolsInvoke: {
    service: "runner",
    method: "tools.invoke",
    request: ToolsInvokeRequest,
    response: ToolsInvokeResponse,
  },
  /** Built-in tools and MCP servers as the answering runner sees them (tools.status). */
  toolsStatus: {
    service: "runner",
    method: "tools.status",
    request: ToolsStatusRequest,
    response: ToolsStatusResponse,
  },
  sessionsAppend: {
    service: "sessions",
    method: "append",
    request: SessionsAppendRequest,
    response: SessionsAppendResponse,
  },
  sessionsHistory: {
    service: "sessions",
    method: "history",
    request: SessionsHistoryRequest,
    response: SessionsHistoryResponse,
  },
  sessionsList: {
    service: "sessions",
    method: "list",
    request: SessionsListRequest,
    response: SessionsListResponse,
  },
  sessionsPreview: {
    service: "sessions",
    method: "preview",
    request: SessionsPreviewRequest,
    response: SessionsPreviewResponse,
  },
  sessionsPatch: {
    service: "sessions",
    method: "patch",
    request: SessionsPatchRequest,
    response: SessionsPatchResponse,
  },
  sessionsReset: {
    service: "sessions",
    method: "reset",
    request: SessionsResetRequest,
    response: SessionsResetResponse,
  },
  sessionsDelete: {
    service: "sessions",
    method: "delete",
    request: SessionsDeleteRequest,
    response: SessionsDeleteResponse,
  },
  sessionsCompact: {
    service: "sessions",
    method: "compact",
    request: SessionsCompactRequest,
    response: SessionsCompactResponse,
  },
  deliverySend: {
    service: "delivery",
    method: "send",
    request: DeliverySendRequest,
    response: DeliveryReceipt,
  },
  deliveryPoll: {
    service: "delivery",
    method: "poll",
    request: DeliveryPollRequest,
    response: DeliveryReceipt,
  },
  deliveryEnqueue: {
    service: "delivery",
    method: "enqueue",
    request: DeliveryEnqueueRequest,
    response: DeliveryEnqueueResponse,
  },
  channelsStatus: {
    service: "delivery",
    method: "channels.status",
    request: ChannelsStatusRequest,
    response: ChannelsStatusResponse,
  },
  /** POST <hooks.path>/wake: queue a text for the main session, and run it now or at the next heartbeat. */
  hooksWake: {
    service: "hooks",
    method: "wake",
    request: HookWakeRequest,
    response: HookAccepted,
  },
  /** POST <hooks.path>/agent: start (or defer to the next heartbeat) an agent run. */
  hooksAgent: {
    service: "hooks",
    method: "agent",
    request: HookAgentRequest,
    response: HookAccepted,
  },
  /** POST <hooks.path>/<mapping path>: a configured mapping's wake or agent run. */
  hooksMapping: {
    service: "hooks",
    method: "mapping",
    request: HookMappingRequest,
    response: HookAccepted,
  },
  /** Scheduled runs (cron.*): JSON params the edge validated, the method's result as JSON. */
  cronList: { service: "hooks", method: "cron.list", request: CronCall, response: CronAnswer },
  cronAdd: { service: "hooks", method: "cron.add", request: CronCall, response: CronAnswer },
  cronUpdate: { service: "hooks", method: "cron.update", request: CronCall, response: CronAnswer },
  cronRemove: { service: "hooks", method: "cron.remove", request: CronCall, response: CronAnswer },
  cronRun: { service: "hooks", method: "cron.run", request: CronCall, response: CronAnswer },
  /** A platform's webhook request, forwarded raw by the edge; the reply goes back verbatim. */
  inboundHandle: {
    service: "delivery",
    method: "inbound.handle",
    request: InboundRequest,
    response: InboundReply,
  },
  channelsPairingList: {
    service: "delivery",
    method: "channels.pairing.list",
    request: ChannelsPairingListRequest,
    response: ChannelsPairingListResponse,
  },
  channelsPairingApprove: {
    service: "delivery",
    method: "channels.pairing.approve",
    request: ChannelsPairingApproveRequest,
    response: ChannelsPairingApproveResponse,
  },
  channelsPairingReject: {
    service: "delivery",
    method: "channels.pairing.reject",
    request: ChannelsPairingRejectRequest,
    response: ChannelsPairingRejectResponse,
  },
  /** Compaction's model summary; builtin models and failures answer errors, and compaction falls back. */
  agentSummarize: {
    service: "runner",
    method: "agent.summarize",
    request: AgentSummarizeRequest,
    response: AgentSummarizeResponse,
  },
} as const;
