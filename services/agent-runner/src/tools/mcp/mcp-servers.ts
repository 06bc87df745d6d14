import type { GatewayConfig } from "@gw/config";
import type { BackoffPolicy, Logger } from "@gw/runtime";
import type { Tool, ToolSource } from "../tool-registry.js";
import type { McpConnection, McpServerStatus } from "./mcp-connection.js";

type McpConfig = GatewayConfig["runner"]["tools"]["mcp"];

/**
 * Every configured MCP server (runner.tools.mcp.servers), as one source of tools. The MCP SDK
 * (about 25 MiB resident) is loaded by `start` when a server is configured, so a runner without
 * MCP servers never loads it.
 */
export class McpServers implements ToolSource {
  private readonly servers: Array<[string, McpConfig["servers"][string]]>;
  private connections: McpConnection[] = [];
  private loading: Promise<void> | undefined;

  constructor(
    config: McpConfig,
    private readonly deps: { logger: Logger; backoff?: BackoffPolicy },
  ) {
    this.servers = Object.entries(config.servers).sort(([a], [b]) => a.localeCompare(b));
  }

  /** Connects in the background: the runner serves at once, and a server's tools appear once listed. */
  start(): void {
    if (this.servers.length === 0 || this.loading !== undefined) return;
    this.loading = import("./mcp-connection.js").then(
      ({ McpConnection }) => {
        this.connections = this.servers.map(([id, server]) => new McpConnection(id, server, this.deps));
        for (const connection of this.connections) connection.start();
      },
      (err: unknown) => this.deps.logger.error({ err }, "cannot load the MCP client; no MCP tools are offered"),
    );
  }

  tools(): readonly Tool[] {
    return this.connections.flatMap((c) => c.tools());
  }

  status(): McpServerStatus[] {
    if (this.connections.length > 0) return this.connections.map((c) => c.status());
    // Still loading the client: every server is connecting.
    return this.servers.map(([id, server]) => ({
      id,
      transport: server.command !== undefined ? "stdio" : "http",
      state: "connecting",
      tools: [],
      restarts: 0,
    }));
  }

  async stop(): Promise<void> {
    await this.loading;
    await Promise.all(this.connections.map((c) => c.stop()));
  }
}
