import { z } from "zod";
import { encodeMessage } from "../encode.js";
import { GatewayError } from "../errors.js";
import { ClientEvent } from "../gen/gateway/v1/events.pb.js";
import { type EncodedJson, parseJsonBytes } from "./encoded-json.js";
import type {
  DeviceRevokedPayload,
  DeviceTokenRotatedPayload,
  PairRequestView,
  PairResolvedPayload,
  PairResultPayload,
} from "./results/device-results.js";
import type { SessionChanges } from "./session-views.js";

/** The SPEC §6 `agent` event streams. */
export const AGENT_STREAMS = ["assistant", "tool", "lifecycle"] as const;
export type AgentStream = (typeof AGENT_STREAMS)[number];

/**
 * The payload of an `agent` event (SPEC §6), with `seq`: the event's number within its run,
 * from 1 and in order (a run ended for a runner that died ends with 2^53-1), which a client
 * hands back to resume the run's events after a reconnect (`agent.subscribe`).
 */
export const AgentEventPayloadSchema = z.object({
  runId: z.string(),
  seq: z.number().int().positive(),
  stream: z.enum(AGENT_STREAMS),
  data: z.record(z.string(), z.unknown()),
});
export type AgentEventPayload = z.infer<typeof AgentEventPayloadSchema>;

const isAgentStream = (value: unknown): value is AgentStream => AGENT_STREAMS.includes(value as AgentStream);
const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * `value` read as AgentEventPayloadSchema reads it (unknown keys dropped), or undefined where
 * the schema would refuse it. Every event of every run is read once on its way to the clients
 * that follow it, and this check costs a tenth of the schema's parse (which also copies `data`);
 * a unit test holds the two to the same answers.
 */
export function parseAgentEventPayload(value: unknown): AgentEventPayload | undefined {
  if (!isRecord(value)) return undefined;
  const { runId, seq, stream, data } = value;
  if (typeof runId !== "string" || typeof seq !== "number" || !Number.isSafeInteger(seq) || seq <= 0) return undefined;
  if (!isAgentStream(stream) || !isRecord(data)) return undefined;
  return { runId, seq, stream, data };
}

/** An `agent` event's payload as it came over the bus (`decodeJson` with the schema, at the cost of the check above). */
export function decodeAgentEventPayload(bytes: Uint8Array): AgentEventPayload {
  const what = "agent event payload on the bus";
  const payload = parseAgentEventPayload(parseJsonBytes(bytes, what));
  if (payload === undefined) throw new GatewayError("INTERNAL", `malformed ${what}`);
  return payload;
}

/** Every event kind a service sends to WebSocket clients, with its payload. */
export interface ClientEventPayloads {
  agent: AgentEventPayload;
  "session.created": { key: string; agentId: string };
  "session.updated": { key: string; changes: SessionChanges };
  "node.pair.requested": PairRequestView;
  "node.pair.resolved": PairResolvedPayload;
  "node.pair.result": PairResultPayload;
  "device.token.rotated": DeviceTokenRotatedPayload;
  "device.revoked": DeviceRevokedPayload;
}
export type ClientEventName = keyof ClientEventPayloads;

export interface ClientEventInput<E extends ClientEventName> {
  event: E;
  payload: EncodedJson<ClientEventPayloads[E]>;
  /** Set on session-scoped events: connections watching this session receive them. */
  sessionKey?: string;
  runId?: string;
  seq?: number;
  /** Internal (never in the client frame): a run's final record on its terminal event, as JSON. */
  finalRecordJson?: Buffer;
}

const EMPTY = Buffer.alloc(0);

/** An event on its way from a service to the edges; the payload is spliced into frames as is. */
export function encodeClientEvent<E extends ClientEventName>(input: ClientEventInput<E>): Uint8Array {
  return encodeMessage(ClientEvent, {
    event: input.event,
    payloadJson: input.payload,
    sessionKey: input.sessionKey ?? "",
    runId: input.runId ?? "",
    seq: input.seq ?? 0,
    finalRecordJson: input.finalRecordJson ?? EMPTY,
  });
}

export function decodeClientEvent(bytes: Uint8Array): ClientEvent {
  return ClientEvent.decode(bytes);
}
