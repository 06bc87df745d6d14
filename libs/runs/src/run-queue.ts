import { runInTrace, startSpan, type TraceContext } from "@gw/bus";
import type { RunRequest } from "@gw/contracts";
import { Admission } from "./admission.js";
import { runStarts } from "./run-starts.js";

/**
 * The run dispatch port. Edges submit; runners consume, each holding at most
 * `maxConcurrent` runs, so a busy runner leaves queued work to the others. A run is
 * acknowledged when its runner says it has taken it (claimed it in the run registry): from then
 * on it is never handed out again (a runner that dies afterwards is detected through the run
 * registry's heartbeat instead). A runner that dies before taking it leaves it to another.
 * Implemented by a JetStream work queue (distributed) and in process (embedded); both
 * pass src/run-queue.contract.ts.
 */
export interface RunQueue {
  submit(request: RunRequest): Promise<void>;
  consume(handler: RunHandler, opts: ConsumeOptions): RunConsumer;
  /** Runs waiting for a runner: submitted and not yet handed to one (gw_runs_queued). */
  depth(): Promise<number>;
  close(): Promise<void>;
}

export interface ConsumeOptions {
  /** Runs held at once at most (`runner.maxConcurrentRuns`). */
  maxConcurrent: number;
  /**
   * Below that, no new run while the event loop's delay p99 is over this many ms (admission.ts;
   * `runner.admissionLagMs`); 0 or absent: the ceiling alone.
   */
  maxLagMs?: number;
}

/**
 * Owns the run until the promise settles; the slot is then free for the next run. The handler
 * calls `taken()` once the run is its own or known not to be runnable; one that settles without
 * calling it has taken the run then. Calling it again does nothing.
 */
export type RunHandler = (request: RunRequest, taken: () => void) => Promise<void>;

export interface RunConsumer {
  /** Runs in hand right now. */
  active(): number;
  /** Runs it takes at once now: `maxConcurrent`, or fewer while admission control holds back (gw_runs_admitted). */
  admitted(): number;
  /** Takes no more work; resolves once runs in hand have finished. */
  stop(): Promise<void>;
}

/** Counts runs in hand against the ceiling and the admission limit below it. */
export class Slots {
  private inUse = 0;
  private waiters: Array<() => void> = [];

  constructor(
    readonly max: number,
    private readonly limit: () => number = () => max,
  ) {}

  get active(): number {
    return this.inUse;
  }

  /** The runs held at once now: the ceiling, or the admission limit below it. */
  get admitted(): number {
    return Math.min(this.max, this.limit());
  }

  /** Runs to ask for now: up to the admission limit (admission.ts). */
  get free(): number {
    return Math.max(0, this.admitted - this.inUse);
  }

  /** Runs that still fit under the ceiling: one asked for before the limit fell is still taken. */
  get room(): number {
    return this.max - this.inUse;
  }

  take(): void {
    this.inUse++;
  }

  release(): void {
    this.inUse--;
    for (const wake of this.waiters.splice(0)) wake();
  }

  async drained(): Promise<void> {
    while (this.inUse > 0) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }
}

/**
 * A consumer's slots under admission control: `onWindow` runs after each window of the
 * admission (it may let more in). `stop` ends the admission's sampling.
 */
export function admittedSlots(opts: ConsumeOptions, onWindow: () => void): { slots: Slots; stop: () => void } {
  const slots: Slots = new Slots(opts.maxConcurrent, () => admission.limit);
  const admission = new Admission({ maxConcurrent: opts.maxConcurrent, maxLagMs: opts.maxLagMs ?? 0 }, () => slots.active);
  admission.onWindow(onWindow);
  return { slots, stop: () => admission.stop() };
}

/**
 * Runs `handler` in a slot; a failing handler is the handler's own business (it logs).
 * `taken` runs once, when the handler says so or when it settles; `released` once the slot is
 * free again.
 */
export function runInSlot(
  slots: Slots,
  handler: RunHandler,
  request: RunRequest,
  hooks: { taken?: () => void; released?: () => void; trace?: TraceContext } = {},
): void {
  let isTaken = false;
  const taken = () => {
    if (isTaken) return;
    isTaken = true;
    hooks.taken?.();
  };
  slots.take();
  // A burst of runs starts over several turns of the event loop (run-starts.ts); the slot is
  // held from now, so the consumer asks for no more than it can hold meanwhile.
  runStarts.start(() => {
    // The run continues the trace of the request that submitted it: its log lines carry that
    // request's id, on whichever runner it lands.
    void runInTrace(startSpan(hooks.trace), () => handler(request, taken))
      .catch(() => undefined)
      .finally(() => {
        taken();
        slots.release();
        hooks.released?.();
      });
  });
}
