import type { GatewayConfig } from "@gw/config";
import type { BackoffPolicy, Logger } from "@gw/runtime";
import type { Tool, ToolSource } from "../tool-registry.js";
import { McpConnection, type McpServerStatus } from "./mcp-connection.js";

/** Every configured MCP server (runner.tools.mcp.servers), as one source of tools. */
export class McpServers implements ToolSource {
  private readonly connections: McpConnection[];

  constructor(config: GatewayConfig["runner"]["tools"]["mcp"], deps: { logger: Logger; backoff?: BackoffPolicy }) {
    this.connections = Object.entries(config.servers)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([id, server]) => new McpConnection(id, server, deps));
  }

  /** Connects in the background: the runner serves at once, and a server's tools appear once listed. */
  start(): void {
    for (const connection of this.connections) connection.start();
  }

  tools(): readonly Tool[] {
    return this.connections.flatMap((c) => c.tools());
  }

  status(): McpServerStatus[] {
    return this.connections.map((c) => c.status());
  }

  async stop(): Promise<void> {
    await Promise.all(this.connections.map((c) => c.stop()));
  }
}
