import { type ChannelError, isChannelError } from "@gw/channels";
import { GatewayError, isGatewayError } from "@gw/contracts";
import { PaceAborted } from "./pacer.js";

/**
 * A channel's failure as the client sees it (SPEC §7): a malformed recipient is the request's
 * fault (INVALID_REQUEST), a platform that cannot do it at all is NOT_SUPPORTED, and every
 * platform refusal or give-up is DELIVERY_FAILED with the platform's reason (adapters build
 * ChannelError messages without credentials; the HTTP client scrubs them too).
 */
export function toGatewayError(err: unknown, where: { channelId: string; attempts?: number }): GatewayError {
  if (isGatewayError(err)) return err;
  if (err instanceof PaceAborted) {
    return new GatewayError("DELIVERY_FAILED", `${where.channelId}: gave up waiting for a rate-limit turn (delivery.sendTimeoutMs)`, {
      cause: err,
    });
  }
  if (!isChannelError(err)) {
    return new GatewayError("INTERNAL", `delivery on ${where.channelId} failed unexpectedly`, { cause: err });
  }
  return fromChannelError(err, where);
}

function fromChannelError(err: ChannelError, where: { channelId: string; attempts?: number }): GatewayError {
  const details: Record<string, unknown> = { channel: where.channelId, reason: err.kind };
  if (err.platformCode !== undefined) details.platformCode = err.platformCode;
  if (err.status !== undefined) details.platformStatus = err.status;
  switch (err.kind) {
    case "recipient":
      return new GatewayError("INVALID_REQUEST", `to: ${err.message}`, { cause: err, details });
    case "unsupported":
      return new GatewayError("NOT_SUPPORTED", `${where.channelId}: ${err.message}`, { cause: err, details });
    case "rejected":
      return new GatewayError("DELIVERY_FAILED", `${where.channelId} refused the message: ${err.message}`, {
        cause: err,
        details,
      });
    default: {
      const tries = where.attempts === undefined ? "" : ` after ${where.attempts} attempt${where.attempts === 1 ? "" : "s"}`;
      return new GatewayError("DELIVERY_FAILED", `${where.channelId} did not deliver${tries}: ${err.message}`, {
        cause: err,
        details,
      });
    }
  }
}
