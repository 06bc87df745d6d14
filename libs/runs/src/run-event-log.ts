import type { ClientEvent } from "@gw/contracts";

/**
 * The RunEventLog port: every run's `agent` events kept for a retention window, so a client
 * that lost its connection asks any edge for what it missed (`agent.subscribe` with
 * `afterSeq`). The events are the ones the runners publish on the bus: the log captures them
 * from there (a JetStream stream in distributed mode, an in-process bounded buffer embedded),
 * so keeping them costs the publisher nothing. Both implementations pass
 * src/run-event-log.contract.ts.
 */
export interface RunEventLog {
  /**
   * The run's kept events, by seq ascending and once each. Everything published on the bus
   * before the call began is in it; an empty list means none are kept (none yet, or past the
   * retention window).
   */
  read(runId: string): Promise<ClientEvent[]>;
  isHealthy(): boolean;
  close(): Promise<void>;
}

/** How long, and how much, the log keeps (`runner.eventRetentionSeconds`, `runner.eventRetentionMaxBytes`). */
export interface RunEventRetention {
  maxAgeMs: number;
  maxBytes: number;
}

export function retentionFor(runner: { eventRetentionSeconds: number; eventRetentionMaxBytes: number }): RunEventRetention {
  return { maxAgeMs: runner.eventRetentionSeconds * 1000, maxBytes: runner.eventRetentionMaxBytes };
}

/** By seq ascending, one event per seq (an event can be kept twice: a repeat of the terminal event). */
export function inSeqOrder(events: ClientEvent[]): ClientEvent[] {
  const bySeq = new Map<number, ClientEvent>();
  for (const event of events) if (!bySeq.has(event.seq)) bySeq.set(event.seq, event);
  return [...bySeq.values()].sort((a, b) => a.seq - b.seq);
}
