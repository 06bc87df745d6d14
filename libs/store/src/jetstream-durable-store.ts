import { GatewayError } from "@gw/contracts";
import { StorageType } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import type { NatsConnection, Status } from "@nats-io/nats-core";
import { checkBucket } from "./durable-args.js";
import type { DurableKv, DurableStore } from "./durable-store.js";
import { JetStreamKv } from "./jetstream-kv.js";

export interface JetStreamDurableStoreOptions {
  /** Prepended to bucket names so several deployments can share one NATS (default "gw_"). */
  bucketPrefix?: string;
  /** Stream replicas for new buckets; 3 in a production cluster (default 1). */
  replicas?: number;
}

/**
 * Follows the connection's status events: NATS reconnects on its own, and isHealthy() must
 * report the gap (gRPC health turns NOT_SERVING) and the recovery.
 */
function trackConnection(nc: NatsConnection): { connected(): boolean; stop(): void } {
  let connected = !nc.isClosed();
  const events = nc.status()[Symbol.asyncIterator]();
  void (async () => {
    for (;;) {
      const next = await events.next().catch(() => ({ done: true as const, value: undefined }));
      if (next.done === true) return;
      const status: Status = next.value;
      if (status.type === "disconnect" || status.type === "close") connected = false;
      else if (status.type === "reconnect") connected = true;
    }
  })();
  return {
    connected: () => connected && !nc.isClosed(),
    stop: () => {
      void events.return?.();
    },
  };
}

/** The distributed durable store. The caller owns `nc`: close() here leaves it open. */
export function createJetStreamDurableStore(
  nc: NatsConnection,
  opts: JetStreamDurableStoreOptions = {},
): DurableStore {
  const prefix = opts.bucketPrefix ?? "gw_";
  const kvm = new Kvm(nc);
  const connection = trackConnection(nc);
  const buckets = new Map<string, Promise<DurableKv>>();
  let closed = false;
  const isOpen = () => {
    if (closed) throw new GatewayError("UNAVAILABLE", "the durable store is closed");
  };

  const open = async (bucket: string): Promise<DurableKv> => {
    try {
      // Per-key TTL is not used: nats-server 2.9 ignores it; expiring data lives in FastStore.
      const kv = await kvm.create(`${prefix}${bucket}`, {
        history: 1,
        storage: StorageType.File,
        replicas: opts.replicas ?? 1,
      });
      return new JetStreamKv(kv, isOpen);
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

  return {
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
      connection.stop();
      buckets.clear();
    },
  };
}
