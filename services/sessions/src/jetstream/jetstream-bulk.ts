import type { JetStreamClient } from "@nats-io/jetstream";
import { encodeBatch } from "../storage/batch-codec.js";
import type { SessionIndex } from "../list-index/session-index.js";
import { withHistory } from "../storage/meta-update.js";
import { tipOf } from "../model.js";
import type { NewSession } from "../repository.js";
import { isSequenceConflict, storeError } from "./jetstream-errors.js";
import { encodeMeta } from "./meta-codec.js";
import type { SessionPartition } from "./session-streams.js";

/** Writes in flight at once: enough to keep a server busy without queueing thousands of acks. */
const IN_FLIGHT = 256;

interface BulkDeps {
  js: JetStreamClient;
  partitionOf(key: string): SessionPartition;
  subject(key: string): string;
  kvKey(key: string): string;
  index: SessionIndex;
}

/**
 * `createMany` for JetStream: per session, the history as one batch on its still-empty subject
 * (expected last sequence 0), then the metadata created at that sequence, then the index entry;
 * `IN_FLIGHT` sessions at a time. A key that exists keeps its metadata; a history batch written
 * for it meanwhile carries another generation and is never read as the session's.
 */
export async function createManyInPartitions(sessions: readonly NewSession[], deps: BulkDeps): Promise<number> {
  let next = 0;
  let created = 0;
  const one = async (session: NewSession) => {
    const { key, gen } = session.meta;
    const part = deps.partitionOf(key);
    let meta = session.meta;
    if (session.entries.length > 0) {
      const batch = { gen, base: true, count: session.entries.length, at: meta.updatedAt, entries: session.entries };
      let seq: number;
      try {
        seq = (await deps.js.publish(deps.subject(key), encodeBatch(batch), { expect: { lastSubjectSequence: 0 } })).seq;
      } catch (err) {
        if (isSequenceConflict(err)) return;
        throw storeError(err, "bulk append");
      }
      meta = { ...withHistory(meta, tipOf(batch, gen), batch.at), historySeq: seq };
    }
    let revision: number;
    try {
      revision = await part.kv.create(deps.kvKey(key), encodeMeta(meta));
    } catch (err) {
      if (isSequenceConflict(err)) return;
      throw storeError(err, "bulk create");
    }
    await deps.index.put(meta, revision);
    created++;
  };
  await Promise.all(
    Array.from({ length: Math.min(IN_FLIGHT, sessions.length) }, async () => {
      while (next < sessions.length) await one(sessions[next++]!);
    }),
  );
  return created;
}
