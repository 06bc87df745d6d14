import { decodeSubjectToken } from "@gw/bus";
import { sleep } from "@gw/runtime";
import { AckPolicy, type ConsumerMessages, DeliverPolicy, type JetStreamClient, type JetStreamManager, type JsMsg } from "@nats-io/jetstream";
import type { SessionIndex } from "../list-index/session-index.js";
import { decodeMeta } from "./meta-codec.js";
import type { SessionPartition } from "./session-streams.js";

const FETCH_BATCH = 256;
const FETCH_EXPIRES_MS = 5_000;
/** How often the feed checks whether the index lost its content (a new epoch). */
const EPOCH_CHECK_MS = 10_000;
/** A consumer of an epoch nobody feeds any more goes away by itself after this long. */
const ABANDONED_AFTER_NS = 3_600 * 1_000_000_000;

export interface IndexFeedDeps {
  js: JetStreamClient;
  jsm: JetStreamManager;
  partitions: readonly SessionPartition[];
  index: SessionIndex;
  onError?: (err: unknown) => void;
  /** How often to check whether the index lost its content (default 10 s; tests shorten it). */
  epochCheckMs?: number;
}

/** The durable consumer that feeds the index of `epoch` from one partition's metadata bucket. */
export function feedConsumerName(epoch: string): string {
  return `sessions_index_${epoch.replace(/[^A-Za-z0-9_-]/g, "_")}`;
}

/**
 * Keeps the list index complete whatever happens to the writers: every change of every
 * partition's metadata bucket reaches the index through a durable consumer of the bucket's
 * stream, applied with its revision as the version (so replaying it, or racing the writer's
 * own direct update, changes nothing). Every replica pulls from the same consumers, so each
 * change is applied about once. The consumer belongs to the index's epoch: when the index lost
 * its content (a new epoch), a new consumer starts from the last value of every key, rebuilding
 * it, and the old one expires.
 */
export function startIndexFeed(deps: IndexFeedDeps): { stop(): Promise<void> } {
  let stopped = false;
  const batches = new Set<ConsumerMessages>();
  const stopping = new AbortController();
  /** A pause that `stop` cuts short. */
  const pause = (ms: number) => sleep(ms, stopping.signal).catch(() => undefined);

  const feedPartition = async (part: SessionPartition, epoch: string, current: () => string) => {
    const stream = `KV_${part.bucket}`;
    const name = feedConsumerName(epoch);
    await deps.jsm.consumers.add(stream, {
      durable_name: name,
      filter_subject: `$KV.${part.bucket}.>`,
      deliver_policy: DeliverPolicy.LastPerSubject,
      ack_policy: AckPolicy.Explicit,
      ack_wait: 30_000_000_000,
      max_ack_pending: 4 * FETCH_BATCH,
      inactive_threshold: ABANDONED_AFTER_NS,
    });
    const consumer = await deps.js.consumers.get(stream, name);
    const prefix = `$KV.${part.bucket}.`;
    while (!stopped && current() === epoch) {
      const batch = await consumer.fetch({ max_messages: FETCH_BATCH, expires: FETCH_EXPIRES_MS });
      batches.add(batch);
      try {
        for await (const msg of batch) await apply(msg, decodeSubjectToken(msg.subject.slice(prefix.length)));
      } finally {
        batches.delete(batch);
      }
    }
  };

  const apply = async (msg: JsMsg, key: string) => {
    const operation = msg.headers?.get("KV-Operation") ?? "";
    // A value that does not decode leaves the list (the repository's readers log it).
    const meta = operation === "" || operation === "PUT" ? decodeMeta(msg.data) : undefined;
    try {
      if (meta) await deps.index.put(meta, msg.seq);
      else await deps.index.remove(key, msg.seq);
      msg.ack();
    } catch (err) {
      deps.onError?.(err);
      msg.nak(1_000);
    }
  };

  let epoch = "";
  const done = (async () => {
    while (!stopped) {
      try {
        epoch = await deps.index.epoch();
        const mine = epoch;
        const loops = deps.partitions.map(async (part) => {
          while (!stopped && epoch === mine) {
            try {
              await feedPartition(part, mine, () => epoch);
            } catch (err) {
              // NATS restarting or the consumer being recreated: try again shortly.
              if (!stopped) deps.onError?.(err);
              if (!stopped) await pause(500);
            }
          }
        });
        while (!stopped && epoch === mine) {
          await pause(deps.epochCheckMs ?? EPOCH_CHECK_MS);
          if (!stopped) epoch = await deps.index.epoch().catch(() => mine);
        }
        for (const batch of batches) batch.stop();
        await Promise.all(loops);
      } catch (err) {
        deps.onError?.(err);
        if (!stopped) await pause(1_000);
      }
    }
  })();

  return {
    async stop() {
      stopped = true;
      for (const batch of batches) batch.stop();
      stopping.abort();
      await done;
    },
  };
}
