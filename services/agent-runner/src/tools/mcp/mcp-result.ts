import type { ToolResult } from "@gw/contracts";

interface ContentPart {
  type: string;
  text?: string;
  mimeType?: string;
  data?: string;
  uri?: string;
  name?: string;
  resource?: { uri?: string; text?: string; mimeType?: string };
}

/** One MCP content part as text the model reads: binary parts are named, not inlined. */
function partText(part: ContentPart): string {
  switch (part.type) {
    case "text":
      return part.text ?? "";
    case "image":
    case "audio":
      return `[${part.type} ${part.mimeType ?? ""}, ${Math.floor(((part.data ?? "").length * 3) / 4)} bytes, not shown]`;
    case "resource":
      return part.resource?.text ?? `[resource ${part.resource?.uri ?? ""}]`;
    case "resource_link":
      return `[resource link ${part.uri ?? ""}${part.name ? ` (${part.name})` : ""}]`;
    default:
      return `[${part.type} content, not shown]`;
  }
}

/** The text of a CallToolResult: its content parts, else its structured content as JSON. */
export function mcpResultText(result: { content?: unknown; structuredContent?: unknown }): string {
  const parts = Array.isArray(result.content) ? (result.content as ContentPart[]) : [];
  const text = parts.map(partText).join("\n");
  if (text === "" && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return text;
}

/** A successful CallToolResult as the gateway's tool result. */
export function mcpToolResult(result: { content?: unknown; structuredContent?: unknown }): ToolResult {
  return { content: mcpResultText(result) };
}
