import type { GatewayConfig } from "@gw/config";
import { httpFetchTool } from "./http-fetch.js";
import { type SessionsToolDeps, sessionsTools } from "./sessions-tools.js";
import { timeNowTool } from "./time-now.js";
import type { ToolDefinition } from "./tool-registry.js";

export interface BuiltinToolDeps {
  config: GatewayConfig["runner"]["tools"];
  /** The sessions service on the bus, for `sessions.list` and `sessions.preview`. */
  sessions: SessionsToolDeps;
}

/** The runner's built-in tools. `message.send` joins once the delivery service exists. */
export function builtinTools(deps: BuiltinToolDeps): ToolDefinition[] {
  return [timeNowTool, httpFetchTool(deps.config.httpFetch), ...sessionsTools(deps.sessions)] as ToolDefinition[];
}
