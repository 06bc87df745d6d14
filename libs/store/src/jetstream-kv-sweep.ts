import type { JetStreamManager } from "@nats-io/jetstream";
import type { KV } from "@nats-io/kv";
import { kvSubject } from "./jetstream-fence.js";

/**
 * Removes delete markers older than `olderThanMs` from a KV bucket's stream, each with whatever
 * came before it on its key, and returns how many messages went.
 *
 * A delete in a history-1 bucket leaves a marker per key, kept forever: a bucket of short-lived
 * keys (outbox jobs, deferred runs, wake events) grows by one message per key ever used, and
 * nats-server 2.9 has neither per-key TTLs nor marker expiry. A purge bounded by the marker's
 * sequence can never touch a value written to the key after it.
 */
export async function sweepDeleteMarkers(
  kv: KV,
  jsm: JetStreamManager,
  bucket: string,
  olderThanMs: number,
): Promise<number> {
  const horizon = Date.now() - olderThanMs;
  const markers: Array<{ key: string; revision: number }> = [];
  const entries = await kv.history({ key: ">" });
  for await (const entry of entries) {
    if (entry.operation !== "PUT" && entry.created.getTime() <= horizon) markers.push({ key: entry.key, revision: entry.revision });
  }
  let purged = 0;
  for (const { key, revision } of markers) {
    const result = await jsm.streams.purge(`KV_${bucket}`, { filter: kvSubject(bucket, key), seq: revision + 1 });
    purged += result.purged;
  }
  return purged;
}
