import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { allows } from "../tool-glob.js";
import { toWireName } from "../tool-registry.js";
import type { McpServerConfig } from "./mcp-transport.js";

/** An MCP tool as the runner offers it. */
export interface ListedTool {
  /** `<serverId>.<tool>`. */
  name: string;
  /** The tool's name on its server. */
  remoteName: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** Pages of tools/list read at most: a server that pages forever is cut off. */
const MAX_PAGES = 20;
/** Model APIs take function names of 1-64 `[A-Za-z0-9_-]`; a dot travels as `__`. */
const WIRE_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Why the runner will not offer a tool, if it will not: outside allowTools or inside denyTools,
 * a name no model API takes once prefixed, or params that are not an object schema.
 */
function refusal(config: McpServerConfig, name: string, remote: string, schema: unknown): string | undefined {
  if (!allows(config.allowTools, remote) || allows(config.denyTools, remote)) return "excluded by allowTools/denyTools";
  if (!WIRE_NAME.test(toWireName(name))) return `its name ${JSON.stringify(name)} is not a valid function name for model APIs`;
  if (schema === null || typeof schema !== "object" || (schema as { type?: unknown }).type !== "object")
    return "its inputSchema is not a JSON Schema of type object";
  return undefined;
}

/** Lists the server's tools (every page) and keeps those the config and model APIs allow. */
export async function listServerTools(
  client: Client,
  serverId: string,
  config: McpServerConfig,
): Promise<{ tools: ListedTool[]; skipped: { name: string; reason: string }[] }> {
  const tools: ListedTool[] = [];
  const skipped: { name: string; reason: string }[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const listed = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: config.timeoutMs });
    for (const tool of listed.tools) {
      const name = `${serverId}.${tool.name}`;
      const reason = refusal(config, name, tool.name, tool.inputSchema);
      if (reason !== undefined) {
        skipped.push({ name, reason });
        continue;
      }
      // The schema passes through as the server wrote it, less the draft marker model APIs refuse.
      const { $schema: _ignored, ...parameters } = tool.inputSchema as Record<string, unknown>;
      tools.push({ name, remoteName: tool.name, description: tool.description ?? tool.title ?? "", parameters });
    }
    cursor = listed.nextCursor;
    if (cursor === undefined) break;
  }
  return { tools: tools.sort((a, b) => a.name.localeCompare(b.name)), skipped };
}
