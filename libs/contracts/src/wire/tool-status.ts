import { z } from "zod";

/** `tools.status`: no params. */
export const ToolsStatusParamsSchema = z.object({});

/** One MCP server as one runner sees it. */
export const McpServerStatusSchema = z.object({
  id: z.string(),
  transport: z.enum(["stdio", "http"]),
  /** connecting (the first time or again), connected, down (waiting to reconnect), stopped. */
  state: z.enum(["connecting", "connected", "down", "stopped"]),
  /** The tools offered to agents, as they name them (`<id>.<tool>`). */
  tools: z.array(z.string()),
  /** Why it last failed or was refused; absent once it connects again. */
  lastError: z.string().optional(),
  /** Reconnections (stdio: restarts of the process) since the runner started. */
  restarts: z.number().int(),
  /** A connected stdio server's process id. */
  pid: z.number().int().optional(),
});

/** What `tools.status` answers, and `ToolsStatusResponse.status_json` carries: one runner's view. */
export const ToolsStatusSchema = z.object({
  runnerId: z.string(),
  /** Built-in tools, by name. */
  builtin: z.array(z.string()),
  mcp: z.array(McpServerStatusSchema),
});
export type ToolsStatus = z.infer<typeof ToolsStatusSchema>;
