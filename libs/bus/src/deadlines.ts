/**
 * Request timeouts on one timer per timeout length instead of one per request. A Node timer is an
 * object, a timer-list insertion and an async resource (whose init hook trace propagation runs);
 * a bus request that is answered in microseconds paid all of it to arm and disarm a timeout that
 * almost never fires. Requests with the same timeout expire in the order they started, so each
 * length keeps its deadlines in a queue, oldest first, and one timer set for the oldest one still
 * waiting. A request answered in time is only marked; marked ones leave the queue as they reach
 * its head, or all at once when nothing waits any more.
 */
export class Deadlines {
  private readonly lanes = new Map<number, Lane>();

  /** Calls `expire` once `ms` have passed, unless the deadline is cancelled first. */
  start(ms: number, expire: () => void): Deadline {
    let lane = this.lanes.get(ms);
    if (lane === undefined) {
      // A lane goes once nothing waits in it: timeouts computed from a deadline are many lengths.
      lane = new Lane(() => this.lanes.delete(ms));
      this.lanes.set(ms, lane);
    }
    return lane.add(Date.now() + ms, expire);
  }

  /** Deadlines still waiting, over every length. */
  get waiting(): number {
    let n = 0;
    for (const lane of this.lanes.values()) n += lane.live;
    return n;
  }
}

export class Deadline {
  constructor(
    private readonly lane: Lane,
    readonly at: number,
    /** Undefined once the deadline has fired or been cancelled. */
    public expire: (() => void) | undefined,
  ) {}

  cancel(): void {
    if (this.expire === undefined) return;
    this.expire = undefined;
    this.lane.cancelled();
  }
}

/** Marked entries are dropped in one pass once they outnumber the waiting ones by this much. */
const COMPACT_AT = 1_024;

class Lane {
  private entries: Deadline[] = [];
  private head = 0;
  private timer: NodeJS.Timeout | undefined;
  live = 0;

  constructor(private readonly onEmpty: () => void) {}

  add(at: number, expire: () => void): Deadline {
    const deadline = new Deadline(this, at, expire);
    this.entries.push(deadline);
    this.live++;
    if (this.timer === undefined) this.arm(at);
    return deadline;
  }

  cancelled(): void {
    this.live--;
    if (this.live === 0) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.entries = [];
      this.head = 0;
      this.onEmpty();
      return;
    }
    // Answered in order (the usual case): the head moves past what is done.
    while (this.entries[this.head]!.expire === undefined) this.head++;
    const queued = this.entries.length - this.head;
    if (queued > COMPACT_AT && queued > 4 * this.live) {
      // One request is slow while many around it finish: keep only the waiting ones.
      this.entries = this.entries.slice(this.head).filter((d) => d.expire !== undefined);
      this.head = 0;
    } else if (this.head > COMPACT_AT && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }

  private arm(at: number): void {
    this.timer = setTimeout(() => this.fire(), Math.max(0, at - Date.now()));
  }

  private fire(): void {
    this.timer = undefined;
    const now = Date.now();
    const due: Array<() => void> = [];
    while (this.head < this.entries.length) {
      const deadline = this.entries[this.head]!;
      if (deadline.expire !== undefined) {
        if (deadline.at > now) break;
        due.push(deadline.expire);
        deadline.expire = undefined;
        this.live--;
      }
      this.head++;
    }
    if (this.live === 0) {
      this.entries = [];
      this.head = 0;
      this.onEmpty();
    } else this.arm(this.entries[this.head]!.at);
    for (const expire of due) expire();
  }
}
