import { createRacing, readsDirect } from "@gw/store";
import { DiscardPolicy, JetStreamApiCodes, JetStreamApiError, type JetStreamManager, StorageType, type StreamInfo } from "@nats-io/jetstream";
import { type KV, Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/nats-core";

export { partitionOf } from "../partitions/partition.js";

/** How the sessions' JetStream storage is laid out and replicated. */
export interface SessionStreamOptions {
  /** The bus subject prefix (nats.subjectPrefix); names the streams, buckets and subjects. */
  subjectPrefix: string;
  /** Partitions: one history stream and one metadata bucket each (sessions.partitions). */
  partitions: number;
  /** Replicas of every stream and bucket; 3 in a production cluster (default 1). */
  replicas?: number;
}

/** One partition's storage: the sessions whose key hashes to it live here and nowhere else. */
export interface SessionPartition {
  index: number;
  /** History: `<prefix>_session_entries_p<i>`, one subject per session under `subjectRoot`. */
  stream: string;
  subjectRoot: string;
  /** Metadata: the KV bucket `<prefix>_sessions_p<i>` (its stream is `KV_<bucket>`). */
  kv: KV;
  bucket: string;
  /** Reads go through direct gets rather than the JetStream API (single-replica streams only). */
  direct: boolean;
}

/**
 * Creates (or opens) every stream and bucket the sessions service stores into, with the given
 * options: the one place that says how they are configured.
 */
export async function ensureSessionStreams(
  nc: NatsConnection,
  jsm: JetStreamManager,
  opts: SessionStreamOptions,
): Promise<SessionPartition[]> {
  const name = opts.subjectPrefix.replaceAll(".", "_");
  const replicas = opts.replicas ?? 1;
  const kvm = new Kvm(nc);
  const open = async (index: number): Promise<SessionPartition> => {
    const stream = `${name}_session_entries_p${index}`;
    const subjectRoot = `${opts.subjectPrefix}.sessions.p${index}.entries`;
    // Created only when the server says there is no such stream: a lookup that timed out (a busy
    // server) must not become a create that fails with "subjects overlap". A replica starting at
    // the same moment may create it first; then it is read again.
    let info: StreamInfo = await jsm.streams.info(stream).catch(async (err: unknown) => {
      if (!(err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound)) throw err;
      const config = {
        name: stream,
        subjects: [`${subjectRoot}.>`],
        storage: StorageType.File,
        num_replicas: replicas,
        allow_rollup_hdrs: true,
        allow_direct: true,
        discard: DiscardPolicy.Old,
        max_msgs_per_subject: -1,
      };
      return jsm.streams.add(config).catch((addErr: unknown) => jsm.streams.info(stream).catch(() => Promise.reject(addErr)));
    });
    // Direct gets skip the JetStream API's JSON and base64, but every replica of a replicated
    // stream answers them, a lagging follower too: only a single-replica stream reads that way.
    const single = info.config.num_replicas <= 1;
    if (single && !info.config.allow_direct) info = await jsm.streams.update(stream, { allow_direct: true });
    const bucket = `${name}_sessions_p${index}`;
    // On R3 a direct get may come from a lagging follower: read KV through the leader there.
    const kv = await createRacing(() => kvm.create(bucket, { history: 1, storage: StorageType.File, replicas, allow_direct: readsDirect(replicas) }));
    return { index, stream, subjectRoot, kv, bucket, direct: single && info.config.allow_direct };
  };
  await refuseUnpartitioned(jsm, name);
  await checkLayout(jsm, kvm, name, opts.partitions, replicas);
  return Promise.all(Array.from({ length: opts.partitions }, (_, i) => createRacing(() => open(i))));
}

/**
 * Sessions written before partitioning live in `<prefix>_session_entries` and the bucket
 * `<prefix>_sessions`, which this release does not read: starting over them would show every
 * session as gone. Refuse until they are moved (or removed) on purpose.
 */
async function refuseUnpartitioned(jsm: JetStreamManager, name: string): Promise<void> {
  const old = [`${name}_session_entries`, `KV_${name}_sessions`];
  for (const stream of old) {
    const found = await jsm.streams.info(stream).then(
      (info) => info.state.messages > 0,
      () => false,
    );
    if (found)
      throw new Error(
        `the stream ${stream} holds sessions in the layout before sessions.partitions; this release reads only the partitioned streams (docs/decisions.md, "Sessions"): move those sessions or delete the stream`,
      );
  }
}

const LAYOUT_ATTEMPTS = 5;
const LAYOUT_RETRY_MS = 500;

/**
 * The partition count is fixed once sessions were stored: with another count a key hashes to
 * another partition and its session would look gone. The first start records it; a start with a
 * different count refuses to run instead of hiding every session.
 */
async function checkLayout(jsm: JetStreamManager, kvm: Kvm, name: string, partitions: number, replicas: number): Promise<void> {
  const bucket = `${name}_sessions_layout`;
  const layout = await createRacing(() => kvm.create(bucket, { history: 1, storage: StorageType.File, replicas }));
  // Read through the stream's leader (the JetStream API, not a direct get): on R3 a lagging
  // follower would answer "nothing recorded" for a count the leader holds.
  const read = () =>
    jsm.streams
      .getMessage(`KV_${bucket}`, { last_by_subj: `$KV.${bucket}.partitions` })
      .then((msg) => msg?.string(), () => undefined);
  const wanted = String(partitions);
  let lastError: unknown;
  for (let attempt = 0; attempt < LAYOUT_ATTEMPTS; attempt++) {
    try {
      await layout.create("partitions", wanted);
      return; // recorded now, by this start
    } catch (err) {
      // Recorded already (or by a replica starting at the same moment): it must agree. Any
      // other failure (a timeout while the stream elects a leader) leaves nothing to read.
      lastError = err;
    }
    const value = await read();
    if (value === wanted) return;
    if (value !== undefined && value !== "")
      throw new Error(
        `sessions.partitions is ${partitions} but the sessions in NATS are stored in ${value} partitions; set it back to ${value}`,
      );
    await new Promise((resolve) => setTimeout(resolve, LAYOUT_RETRY_MS));
  }
  throw new Error(`could not record or read sessions.partitions in ${name}_sessions_layout: ${(lastError as Error)?.message ?? lastError}`);
}
