import { GatewayError } from "@gw/contracts";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";

/**
 * A failed MCP call as the tool error the model reads (and `/api/tools/invoke` answers): the
 * server gone is UNAVAILABLE, no answer in time TIMEOUT, the server's refusal INVALID_REQUEST.
 */
export function mcpCallError(tool: string, server: string, timeoutMs: number, err: unknown): GatewayError {
  if (err instanceof McpError) {
    if (err.code === ErrorCode.RequestTimeout)
      return new GatewayError("TIMEOUT", `tool ${tool}: no answer from MCP server ${server} within ${timeoutMs} ms`, { cause: err });
    if (err.code === ErrorCode.ConnectionClosed)
      return new GatewayError("UNAVAILABLE", `tool ${tool}: MCP server ${server} closed the connection during the call`, { cause: err });
    return new GatewayError("INVALID_REQUEST", `tool ${tool}: ${err.message}`, { cause: err });
  }
  const message = err instanceof Error ? err.message : String(err);
  return new GatewayError("UNAVAILABLE", `tool ${tool}: MCP server ${server} failed: ${message}`, { cause: err });
}
