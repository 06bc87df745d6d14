import { isGatewayError } from "@gw/contracts";
import type { DurableKv } from "@gw/store";
import { z } from "zod";

/**
 * What the replicas share about one job's firings, in the durable store (JetStream KV, or files
 * in embedded mode), so every replica fires from the same point and answers `cron.list` alike.
 */
const JobStateSchema = z.object({
  /** The definition the cursor counts for (schedule, timezone, generation): another one starts afresh. */
  definition: z.string(),
  /** The scheduled time of the last firing dealt with (started, or skipped by catchUp); null: none yet. */
  cursor: z.number().nullable(),
  lastScheduledAt: z.number().optional(),
  lastFiredAt: z.number().optional(),
  lastRunId: z.string().optional(),
  lastResult: z.enum(["running", "ok", "error"]).optional(),
  lastError: z.string().optional(),
});
export type JobState = z.infer<typeof JobStateSchema>;

const TRIES = 8;

const decode = (value: Uint8Array): JobState => JobStateSchema.parse(JSON.parse(Buffer.from(value).toString("utf8")));
const encode = (state: JobState) => Buffer.from(JSON.stringify(state), "utf8");

/**
 * Jobs' states, each changed by compare-and-set on its revision: a replica that read an old
 * state fails to write and reads again, so two replicas' changes never overwrite each other.
 */
export class JobStates {
  constructor(private readonly kv: DurableKv) {}

  async read(id: string): Promise<JobState | null> {
    const entry = await this.kv.get(id);
    return entry === null ? null : decode(entry.value);
  }

  /**
   * Applies `change` to the current state (null: none yet) and writes the result, reading again
   * on a concurrent write; `change` returning undefined writes nothing. Answers what is stored.
   */
  async change(id: string, change: (state: JobState | null) => JobState | undefined): Promise<JobState | null> {
    for (let attempt = 0; ; attempt++) {
      const entry = await this.kv.get(id);
      const current = entry === null ? null : decode(entry.value);
      const next = change(current);
      if (next === undefined) return current;
      try {
        if (entry === null) await this.kv.create(id, encode(next));
        else await this.kv.update(id, encode(next), entry.revision);
        return next;
      } catch (err) {
        if (!isGatewayError(err) || err.code !== "CONFLICT" || attempt + 1 >= TRIES) throw err;
      }
    }
  }

  async remove(id: string): Promise<void> {
    await this.kv.delete(id).catch(() => undefined);
  }
}
