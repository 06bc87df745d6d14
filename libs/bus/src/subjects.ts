/**
 * The parts of a run's events, each on a subject of its own so an edge subscribes only to what
 * its sockets want (DESIGN §6, docs/scaling.md): `life` the lifecycle events (every control
 * connection gets them), `out` the assistant and tool events (only those who asked), `final`
 * the run's recorded outcome with its terminal event (only those waiting on the run).
 */
export const RUN_EVENT_PARTS = ["life", "out", "final"] as const;
export type RunEventPart = (typeof RUN_EVENT_PARTS)[number];

/** Which run event subjects: a field left out matches any (a `*` token). */
export interface RunEventScope {
  startedBy?: string;
  sessionKey?: string;
  runId?: string;
  part?: RunEventPart;
}

/**
 * Subject names (DESIGN §4). The prefix is configurable so several gateways can
 * share one NATS account.
 */
export interface Subjects {
  rpc(service: string, method: string): string;
  /** One edge's event inbox. */
  edgeEvents(edgeId: string): string;
  /** A request to one particular edge (no queue group): `edgeRpc(edgeId, "pair.resolve")`. */
  edgeRpc(edgeId: string, method: string): string;
  /** Reaches every listener of a broadcast topic (for example `session`, `run.abort`). */
  broadcast(topic: string): string;
  /**
   * A run's events: `<prefix>.run.<startedBy>.<session>.<run>.<part>`, named after the edge that
   * started the run, its session, the run and the part (RunEventPart). With every field given it
   * is the subject a publisher uses; a field left out is a wildcard, so `{ startedBy }` is every
   * run that edge started, `{ runId }` one run wherever it started, `{ sessionKey, part: "out" }`
   * the output of every run on a session, `{ part: "life" }` every run's lifecycle.
   */
  runEvents(scope: RunEventScope): string;
  /** What every run event subject matches (the event log's stream, `<prefix>.run.>`). */
  allRunEvents(): string;
  /** Announces that a session's run lock was released, to the runs waiting for it. */
  sessionLockReleased(sessionKey: string): string;
}

/**
 * Any string as one subject token: base64url has no `.`, `*`, `>` or spaces. Session keys
 * and client-chosen run ids contain `:`, `@`, `+`, `#`, so they always go through this.
 */
export function encodeSubjectToken(value: string): string {
  if (value.length === 0) throw new Error("an empty string cannot be a subject token");
  return Buffer.from(value, "utf8").toString("base64url");
}

export function decodeSubjectToken(token: string): string {
  return Buffer.from(token, "base64url").toString("utf8");
}

const TOKEN = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

function checkToken(kind: string, value: string): string {
  if (!TOKEN.test(value)) throw new Error(`invalid ${kind} for a bus subject: ${JSON.stringify(value)}`);
  return value;
}

/** A run subject token: undefined as `*`, an empty edge id as `_` (no base64url of anything is one character). */
function runToken(value: string | undefined): string {
  if (value === undefined) return "*";
  return value === "" ? "_" : encodeSubjectToken(value);
}

export function createSubjects(prefix = "gw"): Subjects {
  checkToken("prefix", prefix);
  return {
    rpc: (service, method) =>
      `${prefix}.rpc.${checkToken("service", service)}.${checkToken("method", method)}`,
    edgeEvents: (edgeId) => `${prefix}.edge.${checkToken("edge id", edgeId)}.events`,
    edgeRpc: (edgeId, method) =>
      `${prefix}.edge.${checkToken("edge id", edgeId)}.rpc.${checkToken("method", method)}`,
    broadcast: (topic) => `${prefix}.bcast.${checkToken("topic", topic)}`,
    runEvents: (scope) =>
      `${prefix}.run.${runToken(scope.startedBy)}.${runToken(scope.sessionKey)}.${runToken(scope.runId)}.${scope.part ?? "*"}`,
    allRunEvents: () => `${prefix}.run.>`,
    sessionLockReleased: (sessionKey) => `${prefix}.runlock.${encodeSubjectToken(sessionKey)}.released`,
  };
}
