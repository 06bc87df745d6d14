/**
 * Reading a Signal account through signal-cli-rest-api's `GET /v1/receive/{number}` (normal
 * and native mode): each call runs `signal-cli receive`, which waits up to `timeout` seconds and
 * answers what arrived. Messages wait on Signal's servers until then, so a gap (a restart, a
 * takeover) loses nothing; json-rpc mode pushes over a WebSocket instead and drops what arrives
 * while nobody listens, so it is refused with a clear error. signal-cli acknowledges what it
 * hands out: a crash between its answer and the sink's store loses that answer's messages (the
 * bridge offers no cursor to re-read them). The cursor only records the last envelope's time.
 */
import { ChannelError, type ChannelReceiver, type ReceivedBatch } from "@gw/channels";
import type { SignalApi } from "./api.js";
import { messageOfEnvelope } from "./envelope-message.js";

/** Seconds one receive waits for messages. */
export const RECEIVE_WAIT_S = 10;

export class SignalReceiver implements ChannelReceiver {
  constructor(
    private readonly api: SignalApi,
    private readonly number: string,
    private readonly waitS = RECEIVE_WAIT_S,
  ) {}

  async *receive(cursor: string | undefined, signal: AbortSignal): AsyncGenerator<ReceivedBatch> {
    const about = await this.api.about(signal);
    if (about.mode === "json-rpc") {
      throw new ChannelError(
        "rejected",
        'signal-cli-rest-api runs in json-rpc mode, whose receive is a WebSocket that drops messages while nobody listens; run it with MODE=native (or normal) to receive, or set inbound: "off"',
      );
    }
    let last = cursor ?? "";
    while (!signal.aborted) {
      const envelopes = await this.api.receive(this.number, this.waitS, signal);
      if (envelopes.length === 0) continue;
      const times = envelopes.map((e) => (e as { envelope?: { timestamp?: unknown } } | null)?.envelope?.timestamp).filter((t): t is number => typeof t === "number");
      if (times.length > 0) last = String(Math.max(...times));
      yield { messages: envelopes.flatMap((e) => messageOfEnvelope(e, this.number) ?? []), cursor: last };
    }
  }
}
