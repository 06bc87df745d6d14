import { type Bus, type Subjects, serveRpc, type Unsubscribe } from "@gw/bus";
import { encodeJson, RPC, type ToolsStatus } from "@gw/contracts";
import type { McpServers } from "./mcp/mcp-servers.js";
import type { ToolRegistry } from "./tool-registry.js";

/**
 * `tools.status` lands here: one runner (whichever the queue group picks) answers with its own
 * view. Every runner keeps its own connections to the same servers, so one view is
 * representative; `runnerId` says whose it is.
 */
export function serveToolsStatus(deps: { bus: Bus; subjects: Subjects; runnerId: string; tools: ToolRegistry; mcp: McpServers }): Unsubscribe {
  return serveRpc(deps.bus, deps.subjects, RPC.toolsStatus, () => {
    const mcp = deps.mcp.status();
    const fromMcp = new Set(mcp.flatMap((s) => s.tools));
    const status: ToolsStatus = { runnerId: deps.runnerId, builtin: deps.tools.names().filter((n) => !fromMcp.has(n)), mcp };
    return { statusJson: encodeJson(status) };
  });
}
