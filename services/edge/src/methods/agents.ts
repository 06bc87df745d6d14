import { callRpc } from "@gw/bus";
import { AgentIdentityGetParamsSchema, AgentsListParamsSchema, RPC } from "@gw/contracts";
import type { BusDeps } from "../bus-deps.js";
import { defineMethod } from "./registry.js";


export function agentMethods(deps: BusDeps) {
  const opts = { timeoutMs: deps.requestTimeoutMs };
  return [
    defineMethod({
      name: "agents.list",
      params: AgentsListParamsSchema,
      handler: () =>
        callRpc(deps.bus, deps.subjects, RPC.agentsList, {}, opts).then((res) => ({ agents: res.agents, defaultAgentId: res.defaultAgentId })),
    }),
    defineMethod({
      name: "agent.identity.get",
      params: AgentIdentityGetParamsSchema,
      handler: async (params) => {
        const identity = await callRpc(deps.bus, deps.subjects, RPC.agentIdentityGet, { agentId: params.agentId }, opts);
        return { ...identity };
      },
    }),
  ];
}
