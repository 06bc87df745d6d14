import {
  AgentIdentityGetParamsSchema,
  AgentParamsSchema,
  AgentsListParamsSchema,
  AgentSubscribeParamsSchema,
  AgentUnsubscribeParamsSchema,
  AgentWaitParamsSchema,
  ChannelsPairingApproveParamsSchema,
  ChannelsPairingListParamsSchema,
  ChannelsPairingRejectParamsSchema,
  ChannelsStatusParamsSchema,
  ConnectParamsSchema,
  CronAddParamsSchema,
  CronIdParamsSchema,
  CronListParamsSchema,
  CronUpdateParamsSchema,
  DeviceIdParamsSchema,
  EmptyParamsSchema,
  GatewayStatusParamsSchema,
  METHOD_RESULTS,
  type MethodName,
  ModelsStatusParamsSchema,
  NodePairRequestParamsSchema,
  PairResolvedPayloadSchema,
  PairResultPayloadSchema,
  PairRequestViewSchema,
  DeviceRevokedPayloadSchema,
  DeviceTokenRotatedPayloadSchema,
  PairRequestIdParamsSchema,
  PollParamsSchema,
  type Role,
  RunAbortParamsSchema,
  RunsListParamsSchema,
  SessionKeyParamsSchema,
  SessionsListParamsSchema,
  SessionsPatchParamsSchema,
  SessionsPreviewParamsSchema,
  SendParamsSchema,
  ToolsStatusParamsSchema,
} from "@gw/contracts";
import type { z } from "zod";
import { rolesFor } from "../auth/permissions.js";
import * as P from "./payloads.js";

export interface WsMethodDoc {
  name: MethodName;
  summary: string;
  /** The schema the edge validates `params` with (the registry's, by identity). */
  params: z.ZodType;
  /** What it answers: METHOD_RESULTS's schema, which the edge's handlers are typed by. */
  result: z.ZodType;
  /** From the permission table (auth/permissions.ts), so the documents cannot drift from it. */
  roles: readonly Role[];
}

type Entry = Omit<WsMethodDoc, "roles" | "result">;

export interface WsEventDoc {
  event: string;
  summary: string;
  payload: z.ZodType;
}

/** Every WebSocket method the edge serves (a test holds this list to the edge's registry). */
const ENTRIES: readonly Entry[] = [
  {
    name: "connect",
    summary: "Authenticate the connection; the first request on every socket.",
    params: ConnectParamsSchema,
  },
  { name: "agents.list", summary: "The configured agents.", params: AgentsListParamsSchema },
  {
    name: "agent.identity.get",
    summary: "One agent's identity (the default agent without agentId).",
    params: AgentIdentityGetParamsSchema,
  },
  {
    name: "agent",
    summary: "Run an agent on a session and answer with its payloads; progress arrives as agent events.",
    params: AgentParamsSchema,
  },
  {
    name: "agent.wait",
    summary: "Wait for a run to finish, from any connection or edge.",
    params: AgentWaitParamsSchema,
  },
  {
    name: "agent.subscribe",
    summary:
      "Receive the agent events of one run (afterSeq: first every kept event after that seq, from any edge), of a session's runs, or of every run (all: control only).",
    params: AgentSubscribeParamsSchema,
  },
  {
    name: "agent.unsubscribe",
    summary: "Stop receiving the events agent.subscribe asked for.",
    params: AgentUnsubscribeParamsSchema,
  },
  { name: "chat.abort", summary: "Abort a run.", params: RunAbortParamsSchema },
  { name: "agent.abort", summary: "Alias of chat.abort.", params: RunAbortParamsSchema },
  {
    name: "sessions.list",
    summary: "Sessions, newest first, optionally of one agent.",
    params: SessionsListParamsSchema,
  },
  {
    name: "sessions.preview",
    summary: "A session and its newest messages; the caller then receives the session's events.",
    params: SessionsPreviewParamsSchema,
  },
  {
    name: "sessions.patch",
    summary: "Change a session's agent, model or thinking level.",
    params: SessionsPatchParamsSchema,
  },
  { name: "sessions.reset", summary: "Clear a session's history.", params: SessionKeyParamsSchema },
  {
    name: "sessions.delete",
    summary: "Remove a session and its history for good.",
    params: SessionKeyParamsSchema,
  },
  {
    name: "sessions.compact",
    summary: "Replace a session's older history with a summary.",
    params: SessionKeyParamsSchema,
  },
  {
    name: "sessions.subscribe",
    summary: "Receive a session's events from now on (the key need not exist yet).",
    params: SessionKeyParamsSchema,
  },
  {
    name: "sessions.unsubscribe",
    summary: "Stop receiving a session's events.",
    params: SessionKeyParamsSchema,
  },
  {
    name: "send",
    summary: "Send a message (text, media by URL) to a recipient on a messaging channel, once per idempotencyKey.",
    params: SendParamsSchema,
  },
  {
    name: "poll",
    summary: "Send a poll on a channel that has polls, once per idempotencyKey.",
    params: PollParamsSchema,
  },
  {
    name: "channels.status",
    summary: "Every configured channel and account: reachable, last success, last error, rate-limit state.",
    params: ChannelsStatusParamsSchema,
  },
  {
    name: "node.pair.request",
    summary:
      "Ask to be paired as a device (also on a pairing connection: connect with pairing: true). Wait on the socket for node.pair.result; closing it withdraws the request.",
    params: NodePairRequestParamsSchema,
  },
  { name: "node.pair.list", summary: "The pending pairing requests.", params: EmptyParamsSchema },
  {
    name: "node.pair.approve",
    summary: "Approve a pending request: the device's token is stored (hashed) and sent to the waiting device.",
    params: PairRequestIdParamsSchema,
  },
  { name: "node.pair.reject", summary: "Reject a pending request.", params: PairRequestIdParamsSchema },
  { name: "device.list", summary: "The paired devices.", params: EmptyParamsSchema },
  {
    name: "device.token.rotate",
    summary:
      "Issue a device a new token; the old one is refused at once on every edge and its sockets are closed (not the asking device's own socket).",
    params: DeviceIdParamsSchema,
  },
  {
    name: "device.revoke",
    summary: "Forget a paired device: its token is refused at once on every edge and its sockets are closed.",
    params: DeviceIdParamsSchema,
  },
  {
    name: "channels.pairing.list",
    summary: "People who wrote to a bot under dmPolicy pairing and wait for approval, with the code each was sent.",
    params: ChannelsPairingListParamsSchema,
  },
  {
    name: "channels.pairing.approve",
    summary: "Approve the sender a pairing code was sent to: the agent answers them from then on (NOT_FOUND for an unknown or lapsed code).",
    params: ChannelsPairingApproveParamsSchema,
  },
  {
    name: "channels.pairing.reject",
    summary: "Reject the sender a pairing code was sent to: the request is dropped and the sender stays unanswered (NOT_FOUND for an unknown or lapsed code).",
    params: ChannelsPairingRejectParamsSchema,
  },
  { name: "cron.list", summary: "The scheduled jobs (config and added) with their next firing and last run's result.", params: CronListParamsSchema },
  {
    name: "cron.add",
    summary: "Add a scheduled job (kept durably); INVALID_REQUEST for a bad schedule, timezone, agent or destination, CONFLICT for a taken id.",
    params: CronAddParamsSchema,
  },
  {
    name: "cron.update",
    summary: "Change an added job (the keys given); a config job is read-only (INVALID_REQUEST), an unknown id NOT_FOUND.",
    params: CronUpdateParamsSchema,
  },
  { name: "cron.remove", summary: "Remove an added job; a config job is read-only (INVALID_REQUEST).", params: CronIdParamsSchema },
  { name: "cron.run", summary: "Start a job's run now, outside its schedule; answers the run's id (agent.wait takes it).", params: CronIdParamsSchema },
  {
    name: "runs.list",
    summary: "The runs not yet ended (queued or running) on every edge and runner, oldest first; filter by session or agent.",
    params: RunsListParamsSchema,
  },
  {
    name: "gateway.status",
    summary: "The edges seen in the last 20 s, whether the runner, sessions and delivery answer, the channels' reachability and the runs in flight.",
    params: GatewayStatusParamsSchema,
  },
  {
    name: "tools.status",
    summary: "The built-in tools and each MCP server's state (connected, its tools, its last error, restarts) as one runner sees it; every runner keeps its own connections.",
    params: ToolsStatusParamsSchema,
  },
  {
    name: "models.status",
    summary: "Every model provider and API key (by id, never the key) with its cooldown as every runner sees it: ready, or cooling and for how long.",
    params: ModelsStatusParamsSchema,
  },
];

export const WS_METHODS: readonly WsMethodDoc[] = ENTRIES.map((entry) => ({
  ...entry,
  result: METHOD_RESULTS[entry.name],
  roles: entry.name === "connect" ? ["control", "node", "webchat"] : rolesFor(entry.name),
}));

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
  {
    event: "node.pair.requested",
    summary: "A device asked to be paired; to control connections.",
    payload: PairRequestViewSchema,
  },
  {
    event: "node.pair.resolved",
    summary: "A pairing request was approved, rejected, expired or withdrawn; to control connections.",
    payload: PairResolvedPayloadSchema,
  },
  {
    event: "node.pair.result",
    summary: "The outcome of this connection's own pairing request, with the device token when approved.",
    payload: PairResultPayloadSchema,
  },
  {
    event: "device.token.rotated",
    summary: "A device's token was rotated; to control connections.",
    payload: DeviceTokenRotatedPayloadSchema,
  },
  { event: "device.revoked", summary: "A paired device was revoked; to control connections.", payload: DeviceRevokedPayloadSchema },
  {
    event: "shutdown",
    summary:
      "This edge drains (a restart or scale-in): new requests get UNAVAILABLE, answers to requests already sent still come, then the socket closes with 1012. To every connection.",
    payload: P.ShutdownEvent,
  },
];
