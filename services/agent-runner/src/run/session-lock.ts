import type { Bus, Subjects } from "@gw/bus";
import type { RunRegistry } from "@gw/runs";

export interface SessionLockDeps {
  bus: Bus;
  subjects: Subjects;
  registry: RunRegistry;
}

/**
 * How long a run waiting for a session's lock sleeps when nobody tells it the lock is free:
 * a holder that dies never announces a release (its lock lapses after its TTL), and the
 * announcement is a bus message, which a reconnecting bus can lose. It is the upper bound on
 * a missed release, not the usual wait.
 */
const RECHECK_MS = 1_000;

const EMPTY = new Uint8Array(0);

/**
 * The per-session run lock (runs on one session take turns; the lock itself is the registry's
 * `runlock:<sessionKey>`). A run that finds the lock taken waits for the holder's release
 * announcement on the bus rather than asking the store over and over.
 */
export class SessionLocks {
  constructor(
    private readonly deps: SessionLockDeps,
    private readonly recheckMs = RECHECK_MS,
  ) {}

  /** Takes the session's lock for `runId`, waiting while another run holds it; throws once `signal` aborts. */
  async acquire(sessionKey: string, runId: string, signal: AbortSignal): Promise<void> {
    if (await this.deps.registry.tryLockSession(sessionKey, runId)) return;
    let released = false;
    let wake: (() => void) | undefined;
    const unsubscribe = this.deps.bus.subscribe(this.deps.subjects.sessionLockReleased(sessionKey), () => {
      released = true;
      wake?.();
    });
    try {
      // Listening before looking again: a release between our two looks is heard, not missed.
      // A flush cut short by a NATS reconnect leaves the recheck below to find the release.
      await this.deps.bus.flush().catch(() => undefined);
      while (!(await this.deps.registry.tryLockSession(sessionKey, runId))) {
        signal.throwIfAborted();
        if (!released) await this.sleep(signal, (w) => (wake = w));
        released = false;
      }
    } finally {
      unsubscribe();
    }
  }

  /** Releases the lock if `runId` holds it, and tells the runs waiting for it. */
  async release(sessionKey: string, runId: string): Promise<void> {
    await this.deps.registry.unlockSession(sessionKey, runId);
    this.deps.bus.publish(this.deps.subjects.sessionLockReleased(sessionKey), EMPTY);
  }

  /** Until a release is announced (`setWake`), the recheck time passes, or `signal` aborts. */
  private sleep(signal: AbortSignal, setWake: (wake: (() => void) | undefined) => void): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        setWake(undefined);
        resolve();
      };
      const timer = setTimeout(done, this.recheckMs);
      signal.addEventListener("abort", done);
      setWake(done);
    });
  }
}
