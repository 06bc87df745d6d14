/**
 * How many runs a process starts in one turn of its event loop; the rest start in the turns
 * after, in the order they came. A run's start (its session read and first write, its model's
 * connection and request, its first events) costs a few hundred microseconds, and a burst of
 * them (32 `agent` requests in one socket read, a JetStream batch) started all at once held the
 * loop for 50-120 ms: every other client, timer and heartbeat of the process waited that long
 * (docs/decisions.md, Agent runs).
 */
export const STARTS_PER_TURN = 16;

/**
 * Run starts paced over event-loop turns: up to `perTurn` start at once, later ones wait for
 * the next turn (a `setImmediate`, so timers and I/O go first). One per process: the loop it
 * protects is the process's.
 */
export class RunStarts {
  private readonly waiting: Array<() => void> = [];
  /** Starts since the last turn began. */
  private used = 0;
  private armed = false;

  constructor(private readonly perTurn = STARTS_PER_TURN) {}

  /** Runs `start` now if this turn has room and nothing waits before it; else in a later turn. */
  start(start: () => void): void {
    if (this.waiting.length === 0 && this.used < this.perTurn) {
      this.used++;
      this.arm();
      start();
      return;
    }
    this.waiting.push(start);
    this.arm();
  }

  /** Starts not yet made. */
  get pending(): number {
    return this.waiting.length;
  }

  private arm(): void {
    if (this.armed) return;
    this.armed = true;
    setImmediate(this.nextTurn);
  }

  private readonly nextTurn = (): void => {
    this.armed = false;
    this.used = 0;
    while (this.waiting.length > 0 && this.used < this.perTurn) {
      this.used++;
      this.waiting.shift()!();
    }
    // Starts made in this turn count against it until the next turn begins.
    if (this.used > 0) this.arm();
  };
}

/** The process's pacer, shared by every run consumer in it. */
export const runStarts = new RunStarts();
