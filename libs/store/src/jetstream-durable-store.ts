import { GatewayError } from "@gw/contracts";
import { jetstream, jetstreamManager, StorageType } from "@nats-io/jetstream";
import { type KV, Kvm } from "@nats-io/kv";
import type { NatsConnection, Status } from "@nats-io/nats-core";
import { checkBucket } from "./durable-args.js";
import { createRacing } from "./jetstream-create.js";
import type { DurableKv, DurableStore } from "./durable-store.js";
import { JetStreamKv } from "./jetstream-kv.js";
import { sweepDeleteMarkers } from "./jetstream-kv-sweep.js";

export interface JetStreamDurableStoreOptions {
  /** Prepended to bucket names so several deployments can share one NATS (default "gw_"). */
  bucketPrefix?: string;
  /** Stream replicas for new buckets; 3 in a production cluster (default 1). */
  replicas?: number;
  /** Delete markers older than this are swept from every bucket this store opened (default 1 h). */
  markerRetentionMs?: number;
}

/** How often a store sweeps the delete markers of the buckets it opened. */
const SWEEP_EVERY_MS = 3_600_000;

/**
 * Follows the connection's status events: NATS reconnects on its own, and isHealthy() must
 * report the gap (gRPC health turns NOT_SERVING) and the recovery.
 */
function trackConnection(nc: NatsConnection): { connected(): boolean; stop(): void } {
  let connected = !nc.isClosed();
  const events = nc.status()[Symbol.asyncIterator]();
  const follow = async () => {
    for (;;) {
      const next = await events.next().catch(() => ({ done: true as const, value: undefined }));
      if (next.done === true) return;
      const status: Status = next.value;
      if (status.type === "disconnect" || status.type === "close") connected = false;
      else if (status.type === "reconnect") connected = true;
    }
  };
  follow().catch(() => {
    connected = false;
  });
  return {
    connected: () => connected && !nc.isClosed(),
    stop: () => {
      events.return?.().catch(() => undefined);
    },
  };
}

/**
 * Whether reads of a bucket may use JetStream's direct get. On nats-server 2.9 every replica of a
 * stream answers a direct get, a follower that has not applied the latest write too, so a read
 * right after an acknowledged write could miss it. Replicated buckets read through the stream
 * leader instead (docs/decisions.md, "Replicated streams").
 */
export function readsDirect(replicas: number): boolean {
  return replicas <= 1;
}

/** The JetStream durable store, and its sweep of old delete markers (which runs hourly by itself). */
export interface JetStreamDurableStore extends DurableStore {
  /** Sweeps every bucket opened so far; returns the number of messages removed. */
  sweep(): Promise<number>;
}

/** The distributed durable store. The caller owns `nc`: close() here leaves it open. */
export function createJetStreamDurableStore(
  nc: NatsConnection,
  opts: JetStreamDurableStoreOptions = {},
): JetStreamDurableStore {
  const prefix = opts.bucketPrefix ?? "gw_";
  const kvm = new Kvm(nc);
  const js = jetstream(nc);
  const connection = trackConnection(nc);
  const buckets = new Map<string, Promise<DurableKv>>();
  const opened = new Map<string, KV>();
  let closed = false;
  const isOpen = () => {
    if (closed) throw new GatewayError("UNAVAILABLE", "the durable store is closed");
  };

  const open = async (bucket: string): Promise<DurableKv> => {
    try {
      // Per-key TTL is not used: nats-server 2.9 ignores it; expiring data lives in FastStore.
      const replicas = opts.replicas ?? 1;
      const kv = await createRacing(() =>
        kvm.create(`${prefix}${bucket}`, {
          history: 1,
          storage: StorageType.File,
          replicas,
          allow_direct: readsDirect(replicas),
        }),
      );
      opened.set(`${prefix}${bucket}`, kv);
      return new JetStreamKv(kv, { name: `${prefix}${bucket}`, js }, isOpen);
    } catch (err) {
      throw new GatewayError(
        "UNAVAILABLE",
        `cannot open JetStream KV bucket ${prefix}${bucket}: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
  };

  const sweep = async (): Promise<number> => {
    const jsm = await jetstreamManager(nc);
    let purged = 0;
    for (const [name, kv] of opened) purged += await sweepDeleteMarkers(kv, jsm, name, opts.markerRetentionMs ?? SWEEP_EVERY_MS);
    return purged;
  };
  // Every replica sweeps; purges bounded by a marker's sequence are idempotent. Jittered, so
  // replicas started together do not sweep together.
  const sweeper = setInterval(() => void sweep().catch(() => undefined), SWEEP_EVERY_MS * (0.9 + 0.2 * Math.random()));
  sweeper.unref();

  return {
    sweep,
    async kv(bucket: string): Promise<DurableKv> {
      isOpen();
      checkBucket(bucket);
      let kv = buckets.get(bucket);
      if (kv === undefined) {
        kv = open(bucket);
        buckets.set(bucket, kv);
        kv.catch(() => buckets.delete(bucket));
      }
      return kv;
    },
    isHealthy: () => !closed && connection.connected(),
    async close() {
      closed = true;
      clearInterval(sweeper);
      connection.stop();
      buckets.clear();
    },
  };
}
