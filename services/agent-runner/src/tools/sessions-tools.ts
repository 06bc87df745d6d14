import { type Bus, callRpc, type Subjects } from "@gw/bus";
import {
  decodeJson,
  RPC,
  SessionPreviewViewSchema,
  SessionsListParamsSchema,
  SessionsPreviewParamsSchema,
  sessionSummaryView,
} from "@gw/contracts";
import { defineTool, type ToolResult } from "./tool-registry.js";

export interface SessionsToolDeps {
  bus: Bus;
  subjects: Subjects;
  /** Bounds each call to the sessions service (gateway.limits.requestTimeoutMs). */
  timeoutMs: number;
}

/** The model reads `content`; clients get the same payload as structured fields. */
function asResult(payload: Record<string, unknown>): ToolResult {
  return { content: JSON.stringify(payload), ...payload };
}

/**
 * `sessions.list` and `sessions.preview` as tools: the same params and payloads as the
 * WebSocket methods, answered by the sessions service over the bus. Which agents may call them
 * is the per-agent allow list's business, as for every tool.
 */
export function sessionsTools(deps: SessionsToolDeps) {
  const opts = (signal: AbortSignal) => {
    signal.throwIfAborted();
    return { timeoutMs: deps.timeoutMs };
  };
  return [
    defineTool({
      name: "sessions.list",
      description:
        "List chat sessions, most recently updated first: key, agentId, model, timestamps and message count. " +
        "Optional agentId filters by agent; limit (1-500, default 50) and offset page through the total.",
      input: SessionsListParamsSchema,
      run: async (p, ctx) => {
        const req = { agentId: p.agentId, limit: p.limit, offset: p.offset };
        const res = await callRpc(deps.bus, deps.subjects, RPC.sessionsList, req, opts(ctx.signal));
        return asResult({ sessions: res.sessions.map(sessionSummaryView), total: res.total });
      },
    }),
    defineTool({
      name: "sessions.preview",
      description:
        "Show one session by key: its agent, model and message count, and its newest messages first " +
        "(limit 1-200, default 20), each with role, sender, body and timestamp.",
      input: SessionsPreviewParamsSchema,
      run: async (p, ctx) => {
        const req = { key: p.key, limit: p.limit };
        const res = await callRpc(deps.bus, deps.subjects, RPC.sessionsPreview, req, opts(ctx.signal));
        // The sessions service sends the payload as EncodedJson: that text is what the model reads.
        const view = decodeJson(res.viewJson, SessionPreviewViewSchema, "session preview on the bus");
        return { content: res.viewJson.toString("utf8"), ...view };
      },
    }),
  ];
}
