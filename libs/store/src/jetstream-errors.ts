import { GatewayError } from "@gw/contracts";
import { JetStreamApiCodes, JetStreamApiError } from "@nats-io/jetstream";

/** A write lost a race: the subject (or KV key) is no longer at the sequence the writer expected. */
export function isSequenceConflict(err: unknown): boolean {
  return (
    err instanceof JetStreamApiError &&
    (err.code === JetStreamApiCodes.StreamWrongLastSequence ||
      err.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}

/** Client errors that mean "NATS is not reachable right now", as opposed to a bug or bad input. */
const UNREACHABLE = new Set([
  "TimeoutError",
  "NoRespondersError",
  "ClosedConnectionError",
  "ConnectionError",
  "DrainingConnectionError",
  "RequestError",
  // nats.js's name for "no responders" on a JetStream API or publish subject: right after a
  // nats-server restart, before JetStream has loaded its streams.
  "JetStreamNotEnabled",
]);

/** NATS away -> UNAVAILABLE (retryable); anything else -> INTERNAL with the cause kept. */
export function jetStreamError(err: unknown, what: string): GatewayError {
  if (err instanceof GatewayError) return err;
  const name = err instanceof Error ? err.name : "";
  const message = err instanceof Error ? err.message : String(err);
  return new GatewayError(UNREACHABLE.has(name) ? "UNAVAILABLE" : "INTERNAL", `${what}: ${message}`, { cause: err });
}
