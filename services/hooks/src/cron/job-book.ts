import { randomUUID } from "node:crypto";
import { type CronJob, CronJobSchema, GatewayError, isGatewayError } from "@gw/contracts";
import type { DurableKv } from "@gw/store";
import { z } from "zod";

/** A job as the scheduler takes it: where it comes from, and which incarnation of its id it is. */
export interface BookedJob {
  job: CronJob;
  source: "config" | "api";
  /** Changes when an id is removed and added again, so the new job's firings never pass for the old one's. */
  generation: string;
}

const StoredJobSchema = z.object({ job: CronJobSchema, generation: z.string() });
type StoredJob = z.infer<typeof StoredJobSchema>;

const encode = (stored: StoredJob) => Buffer.from(JSON.stringify(stored), "utf8");
const decode = (value: Uint8Array): StoredJob => StoredJobSchema.parse(JSON.parse(Buffer.from(value).toString("utf8")));

const notFound = (id: string) => new GatewayError("NOT_FOUND", `no cron job "${id}"`);
const readOnly = (id: string) =>
  new GatewayError("INVALID_REQUEST", `cron job "${id}" is defined in the config file (cron.jobs) and is read-only here; change it there`);

/**
 * The jobs: those of the config file (read-only) and those added with `cron.add`, kept in the
 * durable store (JetStream KV, or files in embedded mode), so every replica sees the same list.
 */
export class CronJobBook {
  private readonly fromConfig: ReadonlyMap<string, BookedJob>;

  constructor(
    configJobs: readonly CronJob[],
    private readonly kv: DurableKv,
  ) {
    this.fromConfig = new Map(configJobs.map((job) => [job.id, { job, source: "config", generation: "config" }]));
  }

  /** Config jobs first, in file order, then the added ones by id. */
  async all(): Promise<BookedJob[]> {
    const keys = (await this.kv.keys()).filter((key) => !this.fromConfig.has(key)).sort();
    const added = await Promise.all(keys.map((key) => this.kv.get(key)));
    const booked = added.flatMap((entry) => (entry === null ? [] : [{ ...decode(entry.value), source: "api" as const }]));
    return [...this.fromConfig.values(), ...booked];
  }

  async get(id: string): Promise<BookedJob> {
    const own = this.fromConfig.get(id);
    if (own !== undefined) return own;
    const entry = await this.kv.get(id);
    if (entry === null) throw notFound(id);
    return { ...decode(entry.value), source: "api" };
  }

  async add(job: CronJob): Promise<BookedJob> {
    if (this.fromConfig.has(job.id)) throw new GatewayError("CONFLICT", `cron job "${job.id}" exists (in the config file)`);
    const stored = { job, generation: randomUUID() };
    try {
      await this.kv.create(job.id, encode(stored));
    } catch (err) {
      if (isGatewayError(err) && err.code === "CONFLICT") throw new GatewayError("CONFLICT", `cron job "${job.id}" exists`, { cause: err });
      throw err;
    }
    return { ...stored, source: "api" };
  }

  /** Replaces an added job's definition with what `change` makes of it (checked by `check` first). */
  async update(jobId: string, change: (job: CronJob) => CronJob, check: (job: CronJob) => Promise<void>): Promise<BookedJob> {
    if (this.fromConfig.has(jobId)) throw readOnly(jobId);
    for (;;) {
      const entry = await this.kv.get(jobId);
      if (entry === null) throw notFound(jobId);
      const stored = decode(entry.value);
      const next = { ...stored, job: change(stored.job) };
      await check(next.job);
      try {
        await this.kv.update(jobId, encode(next), entry.revision);
        return { ...next, source: "api" };
      } catch (err) {
        // Changed meanwhile by another call: apply this one to what it wrote.
        if (!isGatewayError(err) || err.code !== "CONFLICT") throw err;
      }
    }
  }

  async remove(jobId: string): Promise<void> {
    if (this.fromConfig.has(jobId)) throw readOnly(jobId);
    if ((await this.kv.get(jobId)) === null) throw notFound(jobId);
    await this.kv.delete(jobId).catch((err: unknown) => {
      if (!isGatewayError(err) || err.code !== "CONFLICT") throw err;
    });
  }
}
