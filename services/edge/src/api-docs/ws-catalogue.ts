import {
  AgentIdentityGetParamsSchema,
  AgentParamsSchema,
  AgentsListParamsSchema,
  AgentWaitParamsSchema,
  ChannelsPairingApproveParamsSchema,
  ChannelsPairingListParamsSchema,
  ChannelsStatusParamsSchema,
  ConnectParamsSchema,
  PollParamsSchema,
  type Role,
  RunAbortParamsSchema,
  SessionKeyParamsSchema,
  SessionsListParamsSchema,
  SessionsPatchParamsSchema,
  SessionsPreviewParamsSchema,
  SendParamsSchema,
} from "@gw/contracts";
import type { z } from "zod";
import * as P from "./payloads.js";

export interface WsMethodDoc {
  name: string;
  summary: string;
  /** The schema the edge validates `params` with (the registry's, by identity). */
  params: z.ZodType;
  result: z.ZodType;
  roles: readonly Role[];
}

export interface WsEventDoc {
  event: string;
  summary: string;
  payload: z.ZodType;
}

const ALL: readonly Role[] = ["control", "node", "webchat"];
const CONTROL: readonly Role[] = ["control"];

/** Every WebSocket method the edge serves (a test holds this list to the edge's registry). */
export const WS_METHODS: readonly WsMethodDoc[] = [
  {
    name: "connect",
    summary: "Authenticate the connection; the first request on every socket.",
    params: ConnectParamsSchema,
    result: P.ConnectResult,
    roles: ALL,
  },
  { name: "agents.list", summary: "The configured agents.", params: AgentsListParamsSchema, result: P.AgentsListResult, roles: ALL },
  {
    name: "agent.identity.get",
    summary: "One agent's identity (the default agent without agentId).",
    params: AgentIdentityGetParamsSchema,
    result: P.AgentIdentity,
    roles: ALL,
  },
  {
    name: "agent",
    summary: "Run an agent on a session and answer with its payloads; progress arrives as agent events.",
    params: AgentParamsSchema,
    result: P.AgentResult,
    roles: ALL,
  },
  {
    name: "agent.wait",
    summary: "Wait for a run to finish, from any connection or edge.",
    params: AgentWaitParamsSchema,
    result: P.AgentWaitResult,
    roles: ALL,
  },
  { name: "chat.abort", summary: "Abort a run.", params: RunAbortParamsSchema, result: P.RunAbortResult, roles: ALL },
  { name: "agent.abort", summary: "Alias of chat.abort.", params: RunAbortParamsSchema, result: P.RunAbortResult, roles: ALL },
  {
    name: "sessions.list",
    summary: "Sessions, newest first, optionally of one agent.",
    params: SessionsListParamsSchema,
    result: P.SessionsListResult,
    roles: CONTROL,
  },
  {
    name: "sessions.preview",
    summary: "A session and its newest messages; the caller then receives the session's events.",
    params: SessionsPreviewParamsSchema,
    result: P.SessionsPreviewResult,
    roles: ALL,
  },
  {
    name: "sessions.patch",
    summary: "Change a session's agent, model or thinking level.",
    params: SessionsPatchParamsSchema,
    result: P.SessionsPatchResult,
    roles: CONTROL,
  },
  { name: "sessions.reset", summary: "Clear a session's history.", params: SessionKeyParamsSchema, result: P.SessionsResetResult, roles: CONTROL },
  {
    name: "sessions.delete",
    summary: "Remove a session and its history for good.",
    params: SessionKeyParamsSchema,
    result: P.SessionsDeleteResult,
    roles: CONTROL,
  },
  {
    name: "sessions.compact",
    summary: "Replace a session's older history with a summary.",
    params: SessionKeyParamsSchema,
    result: P.SessionsCompactResult,
    roles: CONTROL,
  },
  {
    name: "sessions.subscribe",
    summary: "Receive a session's events from now on (the key need not exist yet).",
    params: SessionKeyParamsSchema,
    result: P.SessionsSubscribeResult,
    roles: ALL,
  },
  {
    name: "sessions.unsubscribe",
    summary: "Stop receiving a session's events.",
    params: SessionKeyParamsSchema,
    result: P.SessionsUnsubscribeResult,
    roles: ALL,
  },
  {
    name: "send",
    summary: "Send a message (text, media by URL) to a recipient on a messaging channel, once per idempotencyKey.",
    params: SendParamsSchema,
    result: P.DeliveryResult,
    roles: CONTROL,
  },
  {
    name: "poll",
    summary: "Send a poll on a channel that has polls, once per idempotencyKey.",
    params: PollParamsSchema,
    result: P.DeliveryResult,
    roles: CONTROL,
  },
  {
    name: "channels.status",
    summary: "Every configured channel and account: reachable, last success, last error, rate-limit state.",
    params: ChannelsStatusParamsSchema,
    result: P.ChannelsStatusResult,
    roles: CONTROL,
  },
  {
    name: "channels.pairing.list",
    summary: "People who wrote to a bot under dmPolicy pairing and wait for approval, with the code each was sent.",
    params: ChannelsPairingListParamsSchema,
    result: P.ChannelsPairingListResult,
    roles: CONTROL,
  },
  {
    name: "channels.pairing.approve",
    summary: "Approve the sender a pairing code was sent to: the agent answers them from then on (NOT_FOUND for an unknown or lapsed code).",
    params: ChannelsPairingApproveParamsSchema,
    result: P.ChannelsPairingApproveResult,
    roles: CONTROL,
  },
];

/** Every event the edge writes to sockets. */
export const WS_EVENTS: readonly WsEventDoc[] = [
  {
    event: "agent",
    summary: "Progress of a run: to the connection that started it, its waiters and every control connection.",
    payload: P.AgentEvent,
  },
  {
    event: "session.created",
    summary: "A session was created (once per key); to control connections and those watching the key.",
    payload: P.SessionCreatedEvent,
  },
  {
    event: "session.updated",
    summary: "A session's settings changed; to control connections and those watching the key.",
    payload: P.SessionUpdatedEvent,
  },
];
