import { z } from "zod";

/** The sessions service's storage layout (distributed mode; embedded mode has one process). */
export const sessionsSectionSchema = () => z
  .strictObject({
    // Sessions are spread over this many JetStream streams and KV buckets by a hash of their
    // key. Fixed for a deployment's life: changing it moves sessions (docs/decisions.md).
    partitions: z.int().min(1).max(256).default(16),
  })
  .prefault({});
