import { type Bus, type Subjects, serveRpc, type Unsubscribe } from "@gw/bus";
import { encodeJson, GatewayError, RPC } from "@gw/contracts";
import type { ToolRegistry } from "./tool-registry.js";

function parseParams(bytes: Uint8Array): unknown {
  if (bytes.length === 0) return {};
  try {
    return JSON.parse(Buffer.from(bytes).toString("utf8"));
  } catch {
    throw new GatewayError("INVALID_REQUEST", "params must be a JSON object");
  }
}

/** `POST /api/tools/invoke` lands here: any registered tool, run directly (decisions.md). */
export function serveToolsInvoke(deps: { bus: Bus; subjects: Subjects; tools: ToolRegistry; timeoutMs: number }): Unsubscribe {
  return serveRpc(deps.bus, deps.subjects, RPC.toolsInvoke, async (req, ctx) => {
    const signal = AbortSignal.timeout(Math.max(1, Math.min(deps.timeoutMs, ctx.deadline - Date.now())));
    const result = await deps.tools.invoke(req.tool, parseParams(req.paramsJson), { signal, agentId: "", sessionKey: "" });
    return { resultJson: encodeJson(result) };
  });
}
