import { channelErrorFromHttp } from "../http-channel-error.js";

export interface BridgeErrorOptions {
  /** The bridge's own name for the failure (BlueBubbles' `error.type`), for ChannelError.platformCode. */
  platformCode?: string;
}

/**
 * A failed call to a bridge (signal-cli-rest-api, BlueBubbles) as a ChannelError: the shared
 * mapping, except that an answer that is not what the API promises is `rejected`, since the
 * message may have gone out and sending it again could double it.
 */
export function bridgeChannelError(err: unknown, opts: BridgeErrorOptions = {}): unknown {
  return channelErrorFromHttp(err, { ...opts, garbled: "rejected" });
}

/** Rejects with the mapped error; for `.catch()` chains and `catch` blocks alike. */
export function throwBridgeError(err: unknown, opts?: BridgeErrorOptions): never {
  throw bridgeChannelError(err, opts);
}
