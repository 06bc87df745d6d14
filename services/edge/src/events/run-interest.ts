import type { RunEventPart, RunEventScope, Subjects } from "@gw/bus";

/** What this edge's sockets and in-process followers want of the bus's run events. */
export interface RunInterest {
  /** Every run's lifecycle events: a control connection (or a firehose) is here. */
  everyLifecycle: boolean;
  /** Every run's output (assistant, tool) events: a firehose is here. */
  everyOutput: boolean;
  /** Sessions whose runs' events a socket here subscribed to. */
  sessions: Iterable<string>;
  /** Runs started on another edge that someone here follows (their `final` record included). */
  runs: Iterable<{ runId: string; sessionKey?: string }>;
}

/**
 * The subscriptions that bring this edge exactly what it wants, each event once: a part of a
 * run is covered by at most one subscription wherever the subjects allow it. Every run's
 * lifecycle (or output) is one subscription that replaces the narrower ones for that part; a
 * followed run on a subscribed session needs only its `final` record of its own. The one
 * overlap subjects cannot exclude: a session subscription and this edge's own runs on that
 * session (the router drops the second copy by seq). `edgeId`'s own runs always come in.
 */
export function plannedSubjects(subjects: Subjects, edgeId: string, interest: RunInterest): Set<string> {
  const planned = new Set<string>();
  const add = (scope: RunEventScope) => planned.add(subjects.runEvents(scope));
  /** The parts of `scope` not covered by an every-run subscription (final always is not). */
  const addParts = (scope: RunEventScope, parts: RunEventPart[]) => {
    if (parts.length === 3) add(scope);
    else for (const part of parts) add({ ...scope, part });
  };
  const open: RunEventPart[] = [];
  if (!interest.everyLifecycle) open.push("life");
  if (!interest.everyOutput) open.push("out");

  if (interest.everyLifecycle) add({ part: "life" });
  if (interest.everyOutput) add({ part: "out" });
  addParts({ startedBy: edgeId }, [...open, "final"]);
  const sessions = new Set(interest.sessions);
  for (const sessionKey of sessions) for (const part of open) add({ sessionKey, part });
  for (const { runId, sessionKey } of interest.runs) {
    const covered = sessionKey !== undefined && sessions.has(sessionKey);
    addParts({ runId }, covered ? ["final"] : [...open, "final"]);
  }
  return planned;
}
