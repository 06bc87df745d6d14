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
   * started the run, its session, the run and the part (RunEventPart); with more than one run
   * event partition `<prefix>.runp.<partition>.<startedBy>.<session>.<run>.<part>`, the partition
   * being runEventPartition(run). With every field given it is the subject a publisher uses; a
   * field left out is a wildcard (the partition too when the run is), so `{ startedBy }` is every
   * run that edge started, `{ runId }` one run wherever it started, `{ sessionKey, part: "out" }`
   * the output of every run on a session, `{ part: "life" }` every run's lifecycle.
   */
  runEvents(scope: RunEventScope): string;
  /** How many partitions run events are spread over (`nats.runEventPartitions`). */
  readonly runEventPartitions: number;
  /** The partition of a run's events: a hash of the run id (hashPartition), 0 with one partition. */
  runEventPartition(runId: string): number;
  /** Every run event subject of one partition (what its stream captures): `<prefix>.run.*.*.*.*` with one partition, `<prefix>.runp.<partition>.*.*.*.*` with more. */
  runEventPartitionSubjects(partition: number): string;
  /** What every run event subject matches: `<prefix>.run.>`, or `<prefix>.runp.>` with more than one partition. */
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

/**
 * The partition of a key: FNV-1a over its UTF-8 bytes, modulo the partition count. The same on
 * every process and every release: changing it (or the count) moves what is partitioned.
 */
export function hashPartition(key: string, partitions: number): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(key, "utf8")) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % partitions;
}

export interface SubjectOptions {
  /** Partitions of the run events (`nats.runEventPartitions`, default 1: the one `<prefix>.run.*.*.*.*` layout). */
  runEventPartitions?: number;
}

/** The root of the run event subjects: `<prefix>.run` with one partition, `<prefix>.runp.<partition>` (`*`: any) with more. */
function runEventRoot(prefix: string, partitions: number, partition: number | "*"): string {
  return partitions === 1 ? `${prefix}.run` : `${prefix}.runp.${partition}`;
}

export function createSubjects(prefix = "gw", opts: SubjectOptions = {}): Subjects {
  checkToken("prefix", prefix);
  const partitions = opts.runEventPartitions ?? 1;
  if (!Number.isInteger(partitions) || partitions < 1) throw new Error(`invalid run event partition count: ${partitions}`);
  return {
    rpc: (service, method) =>
      `${prefix}.rpc.${checkToken("service", service)}.${checkToken("method", method)}`,
    edgeEvents: (edgeId) => `${prefix}.edge.${checkToken("edge id", edgeId)}.events`,
    edgeRpc: (edgeId, method) =>
      `${prefix}.edge.${checkToken("edge id", edgeId)}.rpc.${checkToken("method", method)}`,
    broadcast: (topic) => `${prefix}.bcast.${checkToken("topic", topic)}`,
    runEvents: (scope) =>
      `${runEventRoot(prefix, partitions, scope.runId === undefined ? "*" : hashPartition(scope.runId, partitions))}.${runToken(scope.startedBy)}.${runToken(scope.sessionKey)}.${runToken(scope.runId)}.${scope.part ?? "*"}`,
    runEventPartitions: partitions,
    runEventPartition: (runId) => hashPartition(runId, partitions),
    runEventPartitionSubjects: (partition) => {
      if (!Number.isInteger(partition) || partition < 0 || partition >= partitions) throw new Error(`no run event partition ${partition} of ${partitions}`);
      return `${runEventRoot(prefix, partitions, partition)}.*.*.*.*`;
    },
    allRunEvents: () => (partitions === 1 ? `${prefix}.run.>` : `${prefix}.runp.>`),
    sessionLockReleased: (sessionKey) => `${prefix}.runlock.${encodeSubjectToken(sessionKey)}.released`,
  };
}
