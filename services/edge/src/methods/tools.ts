import { callRpc } from "@gw/bus";
import { decodeJson, RPC, ToolsStatusParamsSchema, ToolsStatusSchema } from "@gw/contracts";
import type { BusDeps } from "../bus-deps.js";
import { defineMethod } from "./registry.js";

/** `tools.status` (control): the built-in tools and each MCP server's state, from one runner. */
export function toolMethods(deps: BusDeps) {
  return [
    defineMethod({
      name: "tools.status",
      params: ToolsStatusParamsSchema,
      handler: async () => {
        const res = await callRpc(deps.bus, deps.subjects, RPC.toolsStatus, {}, { timeoutMs: deps.requestTimeoutMs });
        return decodeJson(res.statusJson, ToolsStatusSchema, "tools status on the bus");
      },
    }),
  ];
}
