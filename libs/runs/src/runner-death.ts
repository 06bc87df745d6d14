import { isFinal, type RunRecord } from "@gw/contracts";
import type { RunRegistry } from "./run-registry.js";

/** What the registry says of a run that someone is waiting on. */
export type RunVerdict =
  /** The outcome is recorded. */
  | { kind: "final"; record: RunRecord }
  /** Queued, or running with a live heartbeat. */
  | { kind: "live" }
  /** Running, its owner's heartbeat lapsed, no outcome recorded: the runner died. */
  | { kind: "dead"; record: RunRecord }
  /** No record: it expired (or never existed). */
  | { kind: "gone" };

/**
 * The runner-death detector (DESIGN §4): a runner refreshes its runs' heartbeats every 2 s
 * with a 6 s TTL, so a running run without one has lost its runner. A runner clears the
 * heartbeat in the same write as it records the outcome, so a missing heartbeat is confirmed
 * by reading the record once more before the run is called dead. A runner in the asker's own
 * process (embedded mode) is never called dead: it lives as long as the asker does, and its
 * heartbeat lapses only when the shared event loop is starved (docs/decisions.md, Agent runs).
 */
export async function inspectRun(registry: RunRegistry, runId: string): Promise<RunVerdict> {
  const record = await registry.get(runId);
  if (record === null) return { kind: "gone" };
  if (isFinal(record.state)) return { kind: "final", record };
  if (record.state !== "running" || registry.isLocalOwner(record.owner)) return { kind: "live" };
  if (await registry.heartbeatAlive(runId)) return { kind: "live" };
  const again = await registry.get(runId);
  if (again !== null && isFinal(again.state)) return { kind: "final", record: again };
  return { kind: "dead", record };
}
