import { GATEWAY_VERSION, GatewayError } from "@gw/contracts";
import { createScrubber, type Scrubber } from "@gw/http-client";
import { type BackoffPolicy, type Logger, retryDelay, sleep } from "@gw/runtime";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Tool, ToolContext, ToolResult, ToolSource } from "../tool-registry.js";
import { mcpCallError } from "./mcp-errors.js";
import { mcpResultText, mcpToolResult } from "./mcp-result.js";
import { listServerTools } from "./mcp-tool-list.js";
import { type McpServerConfig, mcpTransport } from "./mcp-transport.js";

export type McpState = "connecting" | "connected" | "down" | "stopped";

/** One server as `tools.status` shows it, seen from one runner. */
export interface McpServerStatus {
  id: string;
  transport: "stdio" | "http";
  state: McpState;
  /** The tools offered, as agents name them (`<id>.<tool>`). */
  tools: string[];
  /** Why it last failed or was refused, if it ever did. */
  lastError?: string;
  /** Reconnections since the runner started. */
  restarts: number;
  /** A connected stdio server's process id. */
  pid?: number;
}

/**
 * Restarts: quick at first, then no more often than every 30 s, for the runner's life. A
 * connection that lived less than the cap does not reset the count, so a server that dies right
 * after starting backs off instead of spinning.
 */
export const MCP_RESTART_BACKOFF: BackoffPolicy = { baseMs: 250, capMs: 30_000, jitter: "none" };

export interface McpConnectionDeps {
  logger: Logger;
  backoff?: BackoffPolicy;
}

/**
 * The runner's one connection to one MCP server, for the runner's life: connects and lists the
 * tools, relists on `notifications/tools/list_changed`, and reconnects (a stdio server: starts it
 * again) with backoff when it goes away. While it is away its tools stay listed and their calls
 * fail as tool errors; nothing else is touched.
 */
export class McpConnection implements ToolSource {
  private client: Client | undefined;
  private pid: number | undefined;
  private state: McpState = "connecting";
  private listed: Tool[] = [];
  private lastError: string | undefined;
  private restarts = 0;
  private readonly stopping = new AbortController();
  private readonly scrub: Scrubber;
  private readonly logger: Logger;

  constructor(
    readonly id: string,
    private readonly config: McpServerConfig,
    private readonly deps: McpConnectionDeps,
  ) {
    this.scrub = createScrubber([...Object.values(config.env), ...Object.values(config.headers)].filter((v) => v.length >= 4));
    this.logger = deps.logger.child({ mcpServer: id });
  }

  tools(): readonly Tool[] {
    return this.listed;
  }

  status(): McpServerStatus {
    return {
      id: this.id,
      transport: this.config.command !== undefined ? "stdio" : "http",
      state: this.state,
      tools: this.listed.map((t) => t.name),
      ...(this.lastError === undefined ? {} : { lastError: this.lastError }),
      restarts: this.restarts,
      ...(this.pid === undefined || this.state !== "connected" ? {} : { pid: this.pid }),
    };
  }

  start(): void {
    this.run().catch((err: unknown) => this.logger.error({ err }, "MCP connection loop failed"));
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    this.state = "stopped";
    await this.client?.close().catch(() => undefined);
  }

  private async run(): Promise<void> {
    const policy = this.deps.backoff ?? MCP_RESTART_BACKOFF;
    for (let attempt = 0; !this.stopping.signal.aborted; attempt++) {
      const since = Date.now();
      try {
        const closed = await this.connect();
        await closed;
        if (this.stopping.signal.aborted) return;
        this.down("the server closed the connection");
      } catch (err) {
        if (this.stopping.signal.aborted) return;
        this.down(err instanceof Error ? err.message : String(err));
      }
      if (Date.now() - since >= policy.capMs) attempt = 0;
      await sleep(retryDelay(attempt, policy), this.stopping.signal).catch(() => undefined);
      if (this.stopping.signal.aborted) return;
      this.restarts++;
      this.state = "connecting";
    }
  }

  private down(reason: string): void {
    this.client = undefined;
    this.state = "down";
    this.lastError = this.scrub(reason);
    this.logger.warn({ reason: this.lastError }, "MCP server is down; reconnecting with backoff");
  }

  /** Connects and lists; resolves with a promise that settles when the connection closes. */
  private async connect(): Promise<Promise<void>> {
    const { transport, stderr } = mcpTransport(this.config);
    stderr?.on("data", (chunk: Buffer) => this.logger.debug({ stderr: this.scrub(String(chunk)).slice(0, 2_000) }, "MCP server stderr"));
    const client = new Client({ name: "agent-gateway", version: GATEWAY_VERSION }, { capabilities: {} });
    const closed = new Promise<void>((resolve) => {
      client.onclose = resolve;
    });
    client.onerror = (err) => this.logger.debug({ err: this.scrub(err.message) }, "MCP transport error");
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.relist(client).catch((err: unknown) => this.logger.warn({ err: this.scrub(String(err)) }, "MCP tools could not be relisted"));
    });
    try {
      await client.connect(transport, { timeout: this.config.timeoutMs, signal: this.stopping.signal });
      await this.relist(client);
    } catch (err) {
      await client.close().catch(() => undefined);
      throw err;
    }
    this.client = client;
    this.pid = transport instanceof StdioClientTransport ? (transport.pid ?? undefined) : undefined;
    this.state = "connected";
    this.lastError = undefined;
    this.logger.info({ tools: this.listed.length }, "MCP server connected");
    return closed;
  }

  private async relist(client: Client): Promise<void> {
    const { tools, skipped } = await listServerTools(client, this.id, this.config);
    for (const skip of skipped) this.logger.warn({ tool: skip.name, reason: skip.reason }, "MCP tool not offered");
    this.listed = tools.map((t) => ({
      name: t.name,
      description: t.description,
      parameters: t.parameters,
      ...(this.config.maxResultBytes === undefined ? {} : { maxResultBytes: this.config.maxResultBytes }),
      call: (params, ctx) => this.call(t.name, t.remoteName, params, ctx),
    }));
  }

  private async call(name: string, remoteName: string, params: unknown, ctx: ToolContext): Promise<ToolResult> {
    if (params === null || typeof params !== "object" || Array.isArray(params)) throw new GatewayError("INVALID_REQUEST", "params: expected an object");
    const client = this.client;
    if (client === undefined || this.state !== "connected")
      throw new GatewayError("UNAVAILABLE", `tool ${name}: MCP server ${this.id} is not connected${this.lastError ? ` (${this.lastError})` : ""}`);
    const timeout = this.config.timeoutMs;
    // Arguments and results may hold personal data: debug only, configured secrets masked.
    this.logger.debug({ tool: name, args: this.scrub(JSON.stringify(params)).slice(0, 4_096) }, "MCP tool call");
    let result: { content?: unknown; structuredContent?: unknown; isError?: unknown };
    try {
      result = (await client.callTool({ name: remoteName, arguments: params as Record<string, unknown> }, undefined, {
        signal: ctx.signal,
        timeout,
        maxTotalTimeout: timeout,
      })) as typeof result;
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      throw mcpCallError(name, this.id, timeout, err);
    }
    this.logger.debug({ tool: name, isError: result.isError === true, result: this.scrub(mcpResultText(result)).slice(0, 4_096) }, "MCP tool result");
    if (result.isError === true) throw new GatewayError("INVALID_REQUEST", `tool ${name}: ${mcpResultText(result).slice(0, 4_096) || "the tool failed"}`);
    return mcpToolResult(result);
  }
}
