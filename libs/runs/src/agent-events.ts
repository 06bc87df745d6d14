import {
  type AgentEventPayload,
  type ClientEvent,
  decodeJson,
  encodeClientEvent,
  encodeJson,
  type RunRecord,
  RunRecordSchema,
} from "@gw/contracts";

/**
 * The seq of an event that ends a run from outside its runner (the runner died): larger than
 * any seq the runner can have used, so edges order it last and drop duplicates of it.
 */
export const TERMINAL_SEQ = Number.MAX_SAFE_INTEGER;

/** An `agent` event as it leaves for the edges: its payload encoded once, here. */
export function encodeAgentEvent(
  payload: AgentEventPayload,
  meta: { sessionKey: string; seq: number; final?: RunRecord },
): Uint8Array {
  return encodeClientEvent({
    event: "agent",
    payload: encodeJson(payload),
    sessionKey: meta.sessionKey,
    runId: payload.runId,
    seq: meta.seq,
    ...(meta.final ? { finalRecordJson: Buffer.from(JSON.stringify(meta.final), "utf8") } : {}),
  });
}

/** The final record a terminal event carries, or undefined. */
export function finalRecordOf(event: ClientEvent): RunRecord | undefined {
  if (event.finalRecordJson.length === 0) return undefined;
  return decodeJson(event.finalRecordJson, RunRecordSchema, "final run record on the bus");
}

export function isTerminalEvent(payload: AgentEventPayload): boolean {
  return payload.stream === "lifecycle" && (payload.data.phase === "end" || payload.data.phase === "error");
}
