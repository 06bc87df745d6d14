import { encodeClientEvent } from "@gw/bus";

/** The SPEC §6 `agent` event streams. */
export type AgentStream = "assistant" | "tool" | "lifecycle";

export interface AgentEventPayload {
  runId: string;
  stream: AgentStream;
  data: Record<string, unknown>;
}

/**
 * The seq of an event that ends a run from outside its runner (the runner died): larger than
 * any seq the runner can have used, so edges order it last and drop duplicates of it.
 */
export const TERMINAL_SEQ = Number.MAX_SAFE_INTEGER;

export function encodeAgentEvent(
  payload: AgentEventPayload,
  meta: { sessionKey: string; seq: number },
): Uint8Array {
  return encodeClientEvent({
    event: "agent",
    payload: payload as unknown as Record<string, unknown>,
    sessionKey: meta.sessionKey,
    runId: payload.runId,
    seq: meta.seq,
  });
}

export function isTerminalEvent(payload: AgentEventPayload): boolean {
  return payload.stream === "lifecycle" && (payload.data.phase === "end" || payload.data.phase === "error");
}
