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
   * One run's event stream, named after the edge that started it and the run:
   * `runEvents(edgeId, "*")` is every run that edge started, `runEvents("*", runId)` one run
   * wherever it started, `runEvents("*", "*")` every run.
   */
  runEvents(startedBy: string, runId: string): string;
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

/** A run subject token: `*` as is, a missing edge id as `_` (no base64url of anything is one character). */
function runToken(value: string): string {
  if (value === "*") return "*";
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
    runEvents: (startedBy, runId) => `${prefix}.run.${runToken(startedBy)}.${runToken(runId)}.events`,
    sessionLockReleased: (sessionKey) => `${prefix}.runlock.${encodeSubjectToken(sessionKey)}.released`,
  };
}
