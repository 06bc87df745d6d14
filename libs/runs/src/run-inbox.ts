import type { Bus, Subjects } from "@gw/bus";
import { decodeJson, type InboxEntry, InboxEntrySchema, RunAbort } from "@gw/contracts";
import type { FastStore } from "@gw/store";
import type { RunRegistry } from "./run-registry.js";

/** Runs share no slot with each other; a run's inbox sits with its record (the run's hash tag). */
const inboxKey = (runId: string) => `runinbox:{${runId}}`;

/**
 * Each run's inbox, on the FastStore beside the run registry (Redis in distributed mode, so the
 * delivery replica that hands a message over and the runner that reads it need not know one
 * another). A set: handing the same entry over again (a replica taking over a session) adds
 * nothing. What the run read is what its final record says it read (`steered`), so an entry
 * handed over too late, or to a run that failed, stays its sender's to answer in a next turn.
 */
export class RunInbox {
  constructor(
    private readonly store: FastStore,
    private readonly ttlMs: number,
  ) {}

  async offer(runId: string, entries: readonly InboxEntry[]): Promise<void> {
    for (const entry of entries) await this.store.sets.add(inboxKey(runId), JSON.stringify(entry), this.ttlMs);
  }

  /** Everything handed to the run so far, oldest first; unreadable members are skipped. */
  async read(runId: string): Promise<InboxEntry[]> {
    const entries: InboxEntry[] = [];
    for (const member of await this.store.sets.members(inboxKey(runId))) {
      try {
        entries.push(decodeJson(Buffer.from(member, "utf8"), InboxEntrySchema, "run inbox entry"));
      } catch {
        // Not written by offer(): nothing a run should read.
      }
    }
    return entries.sort((a, b) => a.at - b.at || a.id.localeCompare(b.id));
  }
}

/** Asks a run to stop, wherever it is: the flag a runner reads at its claim, and the broadcast a running one hears. */
export async function requestRunAbort(deps: { registry: RunRegistry; bus: Bus; subjects: Subjects }, runId: string): Promise<void> {
  await deps.registry.requestAbort(runId);
  deps.bus.publish(deps.subjects.broadcast("run.abort"), RunAbort.encode({ runId }).finish());
}
