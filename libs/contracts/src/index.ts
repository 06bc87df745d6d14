export { describeIssues } from "./describe-issues.js";
export * from "./encode.js";
export * from "./errors.js";
export { given } from "./given.js";
export * from "./gen/gateway/v1/agents.pb.js";
export { ErrorCode, RpcError, RpcReply } from "./gen/gateway/v1/common.pb.js";
export {
  ChannelAccountStatus,
  ChannelStatus,
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
  PairingRequest,
} from "./gen/gateway/v1/delivery.pb.js";
export { DeviceCredentialChange, PairDelivery, PairResolution } from "./gen/gateway/v1/devices.pb.js";
export { AuthBlocked, ClientEvent } from "./gen/gateway/v1/events.pb.js";
export { CronAnswer, CronCall, HookAccepted, HookAgentRequest, HookMappingRequest, HookWakeRequest } from "./gen/gateway/v1/hooks.pb.js";
export {
  ClientTool,
  RunAbort,
  RunAttachment,
  RunHistoryMessage,
  RunRequest,
  RunToolCall,
  SamplingParams,
  ToolChoice,
  ToolsInvokeRequest,
  ToolsInvokeResponse,
} from "./gen/gateway/v1/runs.pb.js";
export {
  AgentSummarizeRequest,
  AgentSummarizeResponse,
  NewSessionEntry,
  SessionEntry,
  SessionSummary,
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
export * from "./run-record.js";
export { readStoredJson, type StoredRead } from "./stored-json.js";
export { RPC } from "./rpcs.js";
export { GATEWAY_VERSION } from "./version.js";
export * from "./wire/frames.js";
export { exceedsJsonDepth, jsonDepthMessage, MAX_JSON_DEPTH, topLevelPrimitive } from "./wire/json-depth.js";
export * from "./wire/methods.js";
export * from "./wire/delivery-methods.js";
export * from "./wire/device-methods.js";
export * from "./wire/run-methods.js";
export * from "./wire/operator-methods.js";
export * from "./wire/client-events.js";
export * from "./wire/encoded-json.js";
export * from "./wire/session-views.js";
export * from "./wire/image-attachments.js";
export * from "./wire/tool-result.js";
export * from "./wire/tool-status.js";
export { SESSION_KEY_MAX_BYTES, sessionKeyProblem } from "./wire/session-key.js";
export * from "./wire/hook-bodies.js";
export * from "./wire/cron-methods.js";
export * from "./wire/results/index.js";
