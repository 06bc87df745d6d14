import type { Stream } from "node:stream";
import type { GatewayConfig } from "@gw/config";
import { createGuardedFetch, guardUrl } from "@gw/http-client";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";

export type McpServerConfig = GatewayConfig["runner"]["tools"]["mcp"]["servers"][string];

/**
 * The transport to one server. A stdio child gets the config's `env` and nothing of the runner's
 * own environment but the SDK's short list (PATH, HOME, USER, LOGNAME, SHELL, TERM) it needs to
 * start at all; its stderr is piped to the runner's debug log. An HTTP server is reached through
 * http.fetch's SSRF guard, its `allowHosts` trusted.
 */
export function mcpTransport(config: McpServerConfig): { transport: Transport; stderr?: Stream } {
  if (config.command !== undefined) {
    const transport = new StdioClientTransport({ command: config.command, args: config.args, env: config.env, stderr: "pipe" });
    return { transport, stderr: transport.stderr ?? undefined };
  }
  const policy = { allowHosts: config.allowHosts, allowPrivateNetworks: false };
  const url = guardUrl(config.url!, policy);
  return { transport: new StreamableHTTPClientTransport(url, { fetch: createGuardedFetch(policy), requestInit: { headers: config.headers } }) };
}
