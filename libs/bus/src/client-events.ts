import { ClientEvent, encodeMessage } from "@gw/contracts";

export interface ClientEventInput {
  event: string;
  payload: Record<string, unknown>;
  sessionKey?: string;
  runId?: string;
  seq?: number;
  /** Internal (never in the client frame): a run's final record on its terminal event. */
  finalRecordJson?: string;
}

const EMPTY = Buffer.alloc(0);

/** Encodes an event for the edges; the JSON payload is built once, here, by the producer. */
export function encodeClientEvent(input: ClientEventInput): Uint8Array {
  return encodeMessage(ClientEvent, {
    event: input.event,
    payloadJson: Buffer.from(JSON.stringify(input.payload), "utf8"),
    sessionKey: input.sessionKey ?? "",
    runId: input.runId ?? "",
    seq: input.seq ?? 0,
    finalRecordJson: input.finalRecordJson === undefined ? EMPTY : Buffer.from(input.finalRecordJson, "utf8"),
  });
}

export function decodeClientEvent(bytes: Uint8Array): ClientEvent {
  return ClientEvent.decode(bytes);
}

/** The WebSocket text frame `{"event":...,"payload":...}` without parsing the payload again. */
export function clientEventFrame(event: ClientEvent): string {
  return `{"event":${JSON.stringify(event.event)},"payload":${Buffer.from(event.payloadJson).toString("utf8")}}`;
}

const CLOSE = Buffer.from("}");

/**
 * The same frame as UTF-8 bytes, built once per event: the payload bytes go in as they came,
 * and every socket the event reaches sends this one buffer instead of encoding a string again.
 */
export function clientEventFrameBytes(event: ClientEvent): Buffer {
  const head = Buffer.from(`{"event":${JSON.stringify(event.event)},"payload":`, "utf8");
  return Buffer.concat([head, event.payloadJson, CLOSE]);
}
