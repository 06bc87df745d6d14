import { monitorEventLoopDelay } from "node:perf_hooks";

/** The event loop's delay over the last window, in ms (its p99), read once per window. */
export interface LagSampler {
  read(): number;
  close(): void;
}

export interface AdmissionOptions {
  /** The ceiling: `runner.maxConcurrentRuns`. */
  maxConcurrent: number;
  /** A window whose event-loop delay p99 is over this takes no new runs (`runner.admissionLagMs`). */
  maxLagMs: number;
  /** How often the delay is read and the limit moved (default 250 ms). */
  windowMs?: number;
}

const DEFAULT_WINDOW_MS = 250;
/**
 * Where the limit starts, before the runner has shown what it sustains: the default ceiling, which
 * a runner held without harm in every bench (1,024 streams at once were whole), so only a raised
 * ceiling ramps up.
 */
const INITIAL_LIMIT = 256;
/**
 * The limit never falls below this (or the ceiling, if lower): a loop slowed by something else
 * (a busy neighbour, CPU steal) must not serialize the runs, and this many never starved one.
 */
const MIN_LIMIT = 32;
/** A window within the delay budget raises the limit by half; one over it cuts it to 3/4 of what runs. */
const GROW = 1.5;
const SHRINK = 0.75;

/**
 * Admission control for a runner (docs/decisions.md, "Agent runs"): how many runs it holds at
 * once, between 32 and `maxConcurrent`, moved by how well its event loop keeps up. A window whose
 * delay p99 stays within `maxLagMs` restores a cut limit to where it started, and while the runs
 * use at least half the limit raises it by half; a window over it cuts it below the runs in hand,
 * so no new run starts until the loop catches up. Runs beyond the limit wait in the queue (for
 * another runner, or for this one), instead of starving the runs in hand: a starved loop fires
 * their heartbeats late, and an edge then takes a live run for dead. A window is also when the
 * queue is told to look again.
 */
export class Admission {
  private current: number;
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly sampler: LagSampler | null;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly opts: AdmissionOptions,
    /** How many runs are in hand now (the queue's slots). */
    private readonly active: () => number,
    sampler: LagSampler | null = opts.maxLagMs > 0 ? eventLoopLag() : null,
  ) {
    this.current = opts.maxLagMs > 0 ? Math.min(opts.maxConcurrent, INITIAL_LIMIT) : opts.maxConcurrent;
    this.sampler = sampler;
    if (sampler === null) return;
    this.timer = setInterval(() => this.window(sampler.read()), opts.windowMs ?? DEFAULT_WINDOW_MS);
    this.timer.unref();
  }

  /** Runs this runner may hold now. */
  get limit(): number {
    return this.current;
  }

  /** Called after each window (the limit may have grown): the queue asks for more work. */
  onWindow(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** One window's delay p99, in ms: the limit moves, then the listeners hear. */
  window(lagMs: number): void {
    const active = this.active();
    const floor = Math.min(this.opts.maxConcurrent, MIN_LIMIT);
    const initial = Math.min(this.opts.maxConcurrent, INITIAL_LIMIT);
    if (lagMs > this.opts.maxLagMs) this.current = Math.max(floor, Math.floor(Math.min(this.current, active) * SHRINK));
    // A cut lasts only while the loop lags: the first window it keeps up restores the start.
    else if (this.current < initial) this.current = initial;
    else if (active * 2 >= this.current) this.current = Math.min(this.opts.maxConcurrent, Math.ceil(this.current * GROW));
    for (const listener of this.listeners) listener();
  }

  stop(): void {
    clearInterval(this.timer);
    this.sampler?.close();
    this.listeners.clear();
  }
}

/** How often Node's histogram samples the loop, in ms. */
const RESOLUTION_MS = 10;

/**
 * Node's event-loop delay histogram, read and reset once per window. It records the time
 * between its timer's turns, which includes the timer's own interval (an idle loop reads
 * about 10.7 ms at p99): that interval is taken off, so the figure is the delay alone.
 */
function eventLoopLag(): LagSampler {
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  histogram.enable();
  return {
    read: () => {
      const p99 = histogram.count > 0 ? Math.max(0, histogram.percentile(99) / 1e6 - RESOLUTION_MS) : 0;
      histogram.reset();
      return p99;
    },
    close: () => histogram.disable(),
  };
}
