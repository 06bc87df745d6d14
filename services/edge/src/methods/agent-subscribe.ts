import { AgentSubscribeParamsSchema, AgentUnsubscribeParamsSchema } from "@gw/contracts";
import type { AgentSubscriptions } from "../events/agent-subscriptions.js";
import { defineMethod } from "./registry.js";

/** `agent.subscribe` and `agent.unsubscribe`: which runs' events a connection gets (docs/protocol.md). */
export function agentSubscribeMethods(subscriptions: AgentSubscriptions) {
  return [
    defineMethod({
      name: "agent.subscribe",
      params: AgentSubscribeParamsSchema,
      handler: (params, ctx) => subscriptions.subscribe(params, ctx),
    }),
    defineMethod({
      name: "agent.unsubscribe",
      params: AgentUnsubscribeParamsSchema,
      handler: async (params, ctx) => subscriptions.unsubscribe(params, ctx),
    }),
  ];
}
