import { type Bus, decodeSubjectToken, type Subjects, type Unsubscribe } from "@gw/bus";
import { type ClientEvent, decodeClientEvent } from "@gw/contracts";
import { inSeqOrder, type RunEventLog, type RunEventRetention } from "./run-event-log.js";

/** One run's kept events, oldest first from `head`, and the subjects they came on. */
interface RunEvents {
  runId: string;
  events: Buffer[];
  subjects: string[];
}

/** The log's own memory for events: slabs filled in order, so the oldest slab goes first. */
const SLAB_BYTES = 64 * 1024;

/**
 * The embedded gateway's run event log: the lifecycle and output events on the in-process bus,
 * kept in memory within the same limits as the JetStream stream (age and total bytes, the
 * oldest going first). The in-process bus hands a message to every subscriber it had when the
 * message was published, in a microtask queued then; a read lets those run first, so it sees
 * every event published before it began.
 *
 * It holds every event of the last ten minutes by default, so each costs its bytes and little
 * else: the bytes are copied into 64 KiB slabs (a slab is freed once its last event is dropped,
 * and events are dropped in the order they came), and the order of arrival is two arrays, not
 * an object per event.
 */
export class InProcessRunEventLog implements RunEventLog {
  /** Every kept event's arrival time and run, oldest first; `head` is the first one still kept. */
  private readonly keptAt: number[] = [];
  private readonly keptRun: RunEvents[] = [];
  private head = 0;
  private bytes = 0;
  private readonly byRun = new Map<string, RunEvents>();
  /** A run's subjects, read once: the run id is a token of the subject. */
  private readonly bySubject = new Map<string, RunEvents>();
  private slab = Buffer.allocUnsafeSlow(0);
  private slabUsed = 0;
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
    return inSeqOrder((this.byRun.get(runId)?.events ?? []).map((data) => decodeClientEvent(data)));
  }

  isHealthy(): boolean {
    return true;
  }

  close(): Promise<void> {
    for (const unsubscribe of this.subs) unsubscribe();
    return Promise.resolve();
  }

  private keep(data: Uint8Array, subject: string): void {
    const run = this.bySubject.get(subject) ?? this.runOf(subject);
    run.events.push(this.copy(data));
    this.keptAt.push(this.now());
    this.keptRun.push(run);
    this.bytes += data.byteLength;
    this.evict();
  }

  /** `subject` is `…run.<edge>.<session>.<run>.<part>`: the run is its next to last token. */
  private runOf(subject: string): RunEvents {
    const runId = decodeSubjectToken(subject.slice(0, subject.lastIndexOf(".")).split(".").at(-1) ?? "");
    let run = this.byRun.get(runId);
    if (run === undefined) {
      run = { runId, events: [], subjects: [] };
      this.byRun.set(runId, run);
    }
    run.subjects.push(subject);
    this.bySubject.set(subject, run);
    return run;
  }

  /** `data` in the current slab (a large event gets memory of its own). */
  private copy(data: Uint8Array): Buffer {
    if (data.byteLength > SLAB_BYTES / 8) return Buffer.from(data);
    if (this.slabUsed + data.byteLength > this.slab.length) {
      this.slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
      this.slabUsed = 0;
    }
    const view = this.slab.subarray(this.slabUsed, this.slabUsed + data.byteLength);
    view.set(data);
    this.slabUsed += data.byteLength;
    return view;
  }

  /** Drops the oldest events while they are too old or the log is over its bytes. */
  private evict(): void {
    const cutoff = this.now() - this.retention.maxAgeMs;
    while (this.head < this.keptAt.length) {
      if (this.keptAt[this.head]! > cutoff && this.bytes <= this.retention.maxBytes) break;
      const run = this.keptRun[this.head]!;
      this.head += 1;
      // A run's events are kept in the order they came, so its oldest is first in its list.
      this.bytes -= run.events.shift()!.byteLength;
      if (run.events.length === 0) this.forget(run);
    }
    // Compact once the dropped prefix is as long as what is kept.
    if (this.head > 1024 && this.head * 2 > this.keptAt.length) {
      this.keptAt.splice(0, this.head);
      this.keptRun.splice(0, this.head);
      this.head = 0;
    }
  }

  private forget(run: RunEvents): void {
    this.byRun.delete(run.runId);
    for (const subject of run.subjects) this.bySubject.delete(subject);
  }
}
