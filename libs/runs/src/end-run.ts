import type { Bus, Subjects } from "@gw/bus";
import { isFinal, type RunRecord } from "@gw/contracts";
import { publishRunEnd } from "./agent-events.js";
import type { RunRegistry } from "./run-registry.js";

export interface EndRunDeps {
  bus: Bus;
  subjects: Subjects;
  registry: RunRegistry;
}

/**
 * Ends a run on behalf of a runner that cannot (it died, nobody took the run in time, or the
 * run could not be dispatched): records the error as the run's outcome, then publishes the
 * lifecycle `error` the runner would have sent, so every follower on every edge (control
 * connections, `agent.wait` callers) hears the end as it hears any other. It goes out with
 * TERMINAL_SEQ, beyond any seq a runner uses, so edges order it last and drop a repeat.
 */
export async function endRun(
  deps: EndRunDeps,
  record: RunRecord,
  code: "UNAVAILABLE" | "TIMEOUT",
  message: string,
): Promise<RunRecord> {
  const final = await deps.registry.finish(record, { error: { code, message } });
  publishRunEnd(deps.bus, deps.subjects, final, code, message);
  return final;
}

/**
 * The wait for a run ran out: end it with TIMEOUT (nobody finished it in time), unless it ended
 * meanwhile. Null when the registry no longer knows the run; the caller says what that means.
 */
export async function endOverdueRun(deps: EndRunDeps, runId: string): Promise<RunRecord | null> {
  const record = await deps.registry.get(runId);
  if (record === null || isFinal(record.state)) return record;
  return endRun(deps, record, "TIMEOUT", "no runner finished the run in time");
}
