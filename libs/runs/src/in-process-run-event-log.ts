import { type Bus, decodeSubjectToken, type Subjects, type Unsubscribe } from "@gw/bus";
import { type ClientEvent, decodeClientEvent } from "@gw/contracts";
import { inSeqOrder, type RunEventLog, type RunEventRetention } from "./run-event-log.js";

interface Kept {
  runId: string;
  at: number;
  data: Uint8Array;
}

/**
 * The embedded gateway's run event log: the lifecycle and output events on the in-process bus,
 * kept in memory within the same limits as the JetStream stream (age and total bytes, the
 * oldest going first). The in-process bus hands a message to every subscriber it had when the
 * message was published, in a microtask queued then; a read lets those run first, so it sees
 * every event published before it began.
 */
export class InProcessRunEventLog implements RunEventLog {
  /** Every kept event, oldest first; `head` is the first one still kept. */
  private readonly kept: Kept[] = [];
  private head = 0;
  private bytes = 0;
  private readonly byRun = new Map<string, Kept[]>();
  private readonly subs: Unsubscribe[];

  constructor(
    deps: { bus: Bus; subjects: Subjects },
    private readonly retention: RunEventRetention,
    private readonly now: () => number = Date.now,
  ) {
    const keep = (data: Uint8Array, subject: string) => this.keep(data, subject);
    this.subs = [deps.bus.subscribe(deps.subjects.runEvents({ part: "life" }), keep), deps.bus.subscribe(deps.subjects.runEvents({ part: "out" }), keep)];
  }

  async read(runId: string): Promise<ClientEvent[]> {
    await new Promise((resolve) => setImmediate(resolve));
    this.evict();
    return inSeqOrder((this.byRun.get(runId) ?? []).map((k) => decodeClientEvent(k.data)));
  }

  isHealthy(): boolean {
    return true;
  }

  close(): Promise<void> {
    for (const unsubscribe of this.subs) unsubscribe();
    return Promise.resolve();
  }

  /** `subject` is `…run.<edge>.<session>.<run>.<part>`: the run is its next to last token. */
  private keep(data: Uint8Array, subject: string): void {
    const runId = decodeSubjectToken(subject.slice(0, subject.lastIndexOf(".")).split(".").at(-1) ?? "");
    const entry: Kept = { runId, at: this.now(), data };
    this.kept.push(entry);
    this.bytes += data.byteLength;
    const events = this.byRun.get(runId);
    if (events === undefined) this.byRun.set(runId, [entry]);
    else events.push(entry);
    this.evict();
  }

  /** Drops the oldest events while they are too old or the log is over its bytes. */
  private evict(): void {
    const cutoff = this.now() - this.retention.maxAgeMs;
    while (this.head < this.kept.length) {
      const oldest = this.kept[this.head]!;
      if (oldest.at > cutoff && this.bytes <= this.retention.maxBytes) break;
      this.head += 1;
      this.bytes -= oldest.data.byteLength;
      // A run's events are kept in the order they came, so its oldest is first in its list.
      const events = this.byRun.get(oldest.runId);
      events?.shift();
      if (events?.length === 0) this.byRun.delete(oldest.runId);
    }
    // Compact once the dropped prefix is as long as what is kept.
    if (this.head > 1024 && this.head * 2 > this.kept.length) {
      this.kept.splice(0, this.head);
      this.head = 0;
    }
  }
}
