import { encodeClientEvent } from "@gw/bus";
import type { ClientEvent } from "@gw/contracts";
import type { RunRecord } from "./run-registry.js";

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
  meta: { sessionKey: string; seq: number; final?: RunRecord },
): Uint8Array {
  return encodeClientEvent({
    event: "agent",
    payload: payload as unknown as Record<string, unknown>,
    sessionKey: meta.sessionKey,
    runId: payload.runId,
    seq: meta.seq,
    ...(meta.final ? { finalRecordJson: JSON.stringify(meta.final) } : {}),
  });
}

/** The final record a terminal event carries, or undefined. */
export function finalRecordOf(event: ClientEvent): RunRecord | undefined {
  if (event.finalRecordJson.length === 0) return undefined;
  return JSON.parse(Buffer.from(event.finalRecordJson).toString("utf8")) as RunRecord;
}

export function isTerminalEvent(payload: AgentEventPayload): boolean {
  return payload.stream === "lifecycle" && (payload.data.phase === "end" || payload.data.phase === "error");
}
