import type { z } from "zod";
import * as Cron from "../cron-methods.js";
import { ToolsStatusSchema } from "../tool-status.js";
import * as Delivery from "./delivery-results.js";
import * as Devices from "./device-results.js";
import * as Operator from "./operator-results.js";
import * as Runs from "./run-results.js";
import * as Sessions from "./session-results.js";

/**
 * What every WebSocket RPC method answers (its response frame's `payload`), by method name: the
 * one description of each answer. The edge's handlers are typed by it (a handler returning
 * something else does not compile), the API documents are generated from it, `@gw/client`'s
 * `request` returns its types, and an e2e parses real answers of every method against it.
 *
 * A new method adds one line here, `"<name>": <Its>ResultSchema`, with the schema in the
 * results file of its area (or a new one): the edge's `defineMethod` refuses a name this map
 * does not have.
 */
export const METHOD_RESULTS = {
  connect: Runs.ConnectResultSchema,
  "agents.list": Runs.AgentsListResultSchema,
  "agent.identity.get": Runs.AgentIdentityResultSchema,
  agent: Runs.AgentResultSchema,
  "agent.wait": Runs.AgentWaitResultSchema,
  "agent.subscribe": Runs.AgentSubscribeResultSchema,
  "agent.unsubscribe": Runs.AgentUnsubscribeResultSchema,
  "chat.abort": Runs.RunAbortResultSchema,
  "agent.abort": Runs.RunAbortResultSchema,
  "sessions.list": Sessions.SessionsListResultSchema,
  "sessions.preview": Sessions.SessionsPreviewResultSchema,
  "sessions.patch": Sessions.SessionsPatchResultSchema,
  "sessions.reset": Sessions.SessionsResetResultSchema,
  "sessions.delete": Sessions.SessionsDeleteResultSchema,
  "sessions.compact": Sessions.SessionsCompactResultSchema,
  "sessions.subscribe": Sessions.SessionsSubscribeResultSchema,
  "sessions.unsubscribe": Sessions.SessionsUnsubscribeResultSchema,
  send: Delivery.DeliveryResultSchema,
  poll: Delivery.DeliveryResultSchema,
  "channels.status": Delivery.ChannelsStatusResultSchema,
  "channels.pairing.list": Delivery.ChannelsPairingListResultSchema,
  "channels.pairing.approve": Delivery.ChannelsPairingApproveResultSchema,
  "channels.pairing.reject": Delivery.ChannelsPairingRejectResultSchema,
  "node.pair.request": Devices.NodePairRequestResultSchema,
  "node.pair.list": Devices.NodePairListResultSchema,
  "node.pair.approve": Devices.NodePairApproveResultSchema,
  "node.pair.reject": Devices.NodePairRejectResultSchema,
  "device.list": Devices.DeviceListResultSchema,
  "device.token.rotate": Devices.DeviceTokenRotateResultSchema,
  "device.revoke": Devices.DeviceRevokeResultSchema,
  "runs.list": Operator.RunsListResultSchema,
  "gateway.status": Operator.GatewayStatusResultSchema,
  "tools.status": ToolsStatusSchema,
  "models.status": Operator.ModelsStatusResultSchema,
  "cron.list": Cron.CronListResultSchema,
  "cron.add": Cron.CronJobResultSchema,
  "cron.update": Cron.CronJobResultSchema,
  "cron.remove": Cron.CronRemoveResultSchema,
  "cron.run": Cron.CronRunResultSchema,
} as const satisfies Record<string, z.ZodType>;

/** A WebSocket RPC method's name. */
export type MethodName = keyof typeof METHOD_RESULTS;

/** What `method` answers, as a client receives it. */
export type MethodResultOf<M extends MethodName> = z.output<(typeof METHOD_RESULTS)[M]>;

export function isMethodName(name: string): name is MethodName {
  return Object.hasOwn(METHOD_RESULTS, name);
}
