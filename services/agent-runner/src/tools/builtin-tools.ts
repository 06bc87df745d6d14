import type { GatewayConfig } from "@gw/config";
import { httpFetchTool } from "./http-fetch.js";
import { type MessageSendDeps, messageSendTool } from "./message-send.js";
import { type SessionsToolDeps, sessionsTools } from "./sessions-tools.js";
import { timeNowTool } from "./time-now.js";
import type { ToolDefinition } from "./tool-registry.js";

export interface BuiltinToolDeps {
  config: Pick<GatewayConfig["runner"]["tools"], "httpFetch">;
  /** The sessions service on the bus, for `sessions.list` and `sessions.preview`. */
  sessions: SessionsToolDeps;
  /** The delivery service on the bus, for `message.send`. */
  delivery: MessageSendDeps;
}

/** The runner's built-in tools. */
export function builtinTools(deps: BuiltinToolDeps): ToolDefinition[] {
  return [
    timeNowTool,
    httpFetchTool(deps.config.httpFetch),
    ...sessionsTools(deps.sessions),
    messageSendTool(deps.delivery),
  ] as ToolDefinition[];
}
