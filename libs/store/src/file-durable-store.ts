import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { GatewayError } from "@gw/contracts";
import { checkBucket } from "./durable-args.js";
import type { DurableKv, DurableStore } from "./durable-store.js";
import { FileKv } from "./file-kv.js";

/**
 * The embedded-mode durable store: `<dir>/<bucket>/<one file per key>`. Writes are atomic and
 * fsynced; create/update are atomic within this process, which is all embedded mode runs.
 */
export async function createFileDurableStore(dir: string): Promise<DurableStore> {
  await mkdir(dir, { recursive: true });
  const buckets = new Map<string, Promise<FileKv>>();
  let closed = false;
  const isOpen = () => {
    if (closed) throw new GatewayError("UNAVAILABLE", "the durable store is closed");
  };

  return {
    async kv(bucket: string): Promise<DurableKv> {
      isOpen();
      checkBucket(bucket);
      let kv = buckets.get(bucket);
      if (kv === undefined) {
        kv = FileKv.open(join(dir, bucket), isOpen);
        buckets.set(bucket, kv);
        // A failed open must not be cached forever: the next call retries.
        kv.catch(() => buckets.delete(bucket));
      }
      return kv;
    },
    isHealthy: () => !closed,
    async close() {
      closed = true;
      buckets.clear();
    },
  };
}
