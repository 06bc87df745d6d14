import { TERMINAL_SEQ } from "@gw/runs";

/** One event on its way through a gate: its seq and the frame the socket gets. */
export interface GatedEvent {
  seq: number;
  /** null: an event that keeps its place in the order but is not sent (a corrupt stored one). */
  frame: Buffer | null;
  /** The run's last event (lifecycle end or error). */
  terminal: boolean;
  /** What a socket other than control gets instead of `frame` (a failure's words withheld: public-run-events.ts). */
  publicFrame?: Buffer;
}

/**
 * The handoff from a run's stored events to its live ones, for one socket that resumes after
 * `afterSeq` (agent.subscribe): no gap, no duplicate, in order. The caller subscribes live
 * first and offers every live event here, reads the stored ones (everything published before
 * the read began is in them) and fills them in, then opens the gate. Until it is open, live
 * events wait in a buffer; after, each goes out as it comes, unless it would leave a gap: it
 * waits again, and `onGap` asks the caller to fill in from the store. A run's seqs run 1, 2, 3…
 * with nothing skipped; TERMINAL_SEQ (a run ended for a runner that died) follows anything.
 * Without `afterSeq` the gate starts at the first live event (a live-only subscription that
 * still mends gaps).
 *
 * No I/O: the caller sends (`send`) and reads the store.
 */
export class ResumeGate {
  private lastSent: number | undefined;
  private readonly waiting = new Map<number, GatedEvent>();
  private open = false;
  private gapReported = false;

  constructor(
    afterSeq: number | undefined,
    private readonly send: (event: GatedEvent) => void,
    private readonly onGap: () => void = () => undefined,
  ) {
    this.lastSent = afterSeq;
  }

  /** The highest seq sent so far (or `afterSeq`; 0 before the first event of a live-only gate). */
  get sent(): number {
    return this.lastSent ?? 0;
  }

  /** Whether the run's last event went out. */
  ended = false;

  /** Waiting events that cannot go out yet because one before them is missing. */
  get hasGap(): boolean {
    return this.waiting.size > 0;
  }

  /** A live event. */
  offer(event: GatedEvent): void {
    this.lastSent ??= event.seq === TERMINAL_SEQ ? 0 : event.seq - 1;
    if (event.seq <= this.lastSent || this.waiting.has(event.seq)) return;
    this.waiting.set(event.seq, event);
    if (!this.open) return;
    this.drain();
    if (this.hasGap && !this.gapReported) {
      this.gapReported = true;
      this.onGap();
    }
  }

  /** Stored events, by seq ascending: what follows the last one sent goes out, then what waited. */
  fill(stored: GatedEvent[]): void {
    for (const event of stored) {
      if (event.seq <= this.sent) continue;
      if (!this.follows(event.seq)) break;
      this.emit(event);
    }
    this.drain();
    if (!this.hasGap) this.gapReported = false;
  }

  /** From now on live events go out as they come. */
  openGate(): void {
    this.open = true;
    this.drain();
  }

  /**
   * Gives up on a gap the store cannot fill (the events are gone): what waits goes out in
   * order, as it is. The caller has tried the store and says so in its log.
   */
  skipGap(): void {
    for (const seq of [...this.waiting.keys()].sort((a, b) => a - b)) this.emit(this.waiting.get(seq)!);
    this.waiting.clear();
    this.gapReported = false;
  }

  private follows(seq: number): boolean {
    return seq === this.sent + 1 || seq === TERMINAL_SEQ;
  }

  private drain(): void {
    for (;;) {
      const next = this.waiting.get(this.sent + 1) ?? this.waiting.get(TERMINAL_SEQ);
      if (next === undefined) return;
      // The terminal event from outside the runner waits for whatever the runner had sent before.
      if (next.seq === TERMINAL_SEQ && this.waiting.size > 1) return;
      this.waiting.delete(next.seq);
      this.emit(next);
    }
  }

  private emit(event: GatedEvent): void {
    this.waiting.delete(event.seq);
    this.lastSent = event.seq;
    if (event.terminal) this.ended = true;
    this.send(event);
  }
}
