import { type AgentEventPayload, type ClientEvent, decodeAgentEventPayload, encodeJson, receivedJson } from "@gw/contracts";
import { genericMessage, isErrorCode, isServerFailure } from "../error-detail.js";
import { encodedEventFrame } from "../encoded-frames.js";

/** In every lifecycle `error` event's bytes (its phase and its `error` key): the cheap test before a parse. */
const ERROR_WORD = Buffer.from('"error"', "utf8");

/**
 * A lifecycle `error` event's data as a connection other than control gets it (DESIGN §10): a
 * server-side failure's message, which may quote the provider's URL and host, becomes the
 * catalogue's with the run's request id (`data.requestId`), under which the runner logged it.
 * Undefined when there is nothing to withhold.
 */
function publicErrorData(data: Record<string, unknown>): Record<string, unknown> | undefined {
  if (data.phase !== "error" || !isErrorCode(data.code) || !isServerFailure(data.code)) return undefined;
  const requestId = typeof data.requestId === "string" ? data.requestId : undefined;
  return { ...data, error: genericMessage(data.code, requestId) };
}

/** An `agent` event as a connection other than control gets it: the same object unless it is a lifecycle error to withhold. */
export function publicRunEvent(payload: AgentEventPayload): AgentEventPayload {
  if (payload.stream !== "lifecycle") return payload;
  const data = publicErrorData(payload.data);
  return data === undefined ? payload : { ...payload, data };
}

/**
 * The frame a connection other than control gets for a lifecycle event off the bus, when it is
 * not the shared one: undefined for every event but a server-side failure's `error`. Only a
 * lifecycle event whose bytes hold `"error"` is parsed, so the events of runs that end well cost
 * one byte search.
 */
export function publicLifecycleFrame(event: ClientEvent): Buffer | undefined {
  const bytes = receivedJson(event.payloadJson);
  if (!bytes.includes(ERROR_WORD)) return undefined;
  let payload: AgentEventPayload;
  try {
    payload = decodeAgentEventPayload(bytes);
  } catch {
    return undefined;
  }
  const shown = publicRunEvent(payload);
  return shown === payload ? undefined : encodedEventFrame("agent", encodeJson(shown));
}
