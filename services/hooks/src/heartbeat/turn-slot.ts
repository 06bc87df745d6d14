import { isGatewayError } from "@gw/contracts";
import type { DurableKv } from "@gw/store";
import { z } from "zod";

/** The main-session turn being started: its run (id and nonce fixed) and the queued texts it takes. */
export interface TurnBatch {
  /** The replica starting it; another may take the batch over only once this one is gone. */
  holder: string;
  runId: string;
  nonce: string;
  keys: string[];
  createdAt: number;
}

const BatchSchema = z.object({
  holder: z.string(),
  runId: z.string(),
  nonce: z.string(),
  keys: z.array(z.string()),
  createdAt: z.number(),
});
const SlotSchema = z.union([z.object({ idle: z.literal(true) }), z.object({ batch: BatchSchema })]);

export interface SlotState {
  batch: TurnBatch | null;
  /** null while the slot was never written. */
  revision: number | null;
}

const KEY = "main-turn";
const encode = (value: z.infer<typeof SlotSchema>) => Buffer.from(JSON.stringify(value), "utf8");

function isConflict(err: unknown): boolean {
  return isGatewayError(err) && err.code === "CONFLICT";
}

/**
 * The one main-session turn that may be under way, in the durable store next to the texts, so
 * that a turn is started once across replicas and restarts. Every change is a compare-and-set on
 * the slot's revision, never a delete: a replica that was thought dead and wakes up late can
 * only fail to write, not release a batch someone else has taken since.
 */
export class TurnSlot {
  constructor(private readonly kv: DurableKv) {}

  async read(): Promise<SlotState> {
    const entry = await this.kv.get(KEY);
    if (entry === null) return { batch: null, revision: null };
    const value = SlotSchema.parse(JSON.parse(Buffer.from(entry.value).toString("utf8")));
    return { batch: "batch" in value ? value.batch : null, revision: entry.revision };
  }

  /** Puts `batch` in the slot if it is still as read; the new revision, or null when another replica changed it first. */
  async take(batch: TurnBatch, read: SlotState): Promise<number | null> {
    try {
      return read.revision === null
        ? await this.kv.create(KEY, encode({ batch }))
        : await this.kv.update(KEY, encode({ batch }), read.revision);
    } catch (err) {
      if (isConflict(err)) return null;
      throw err;
    }
  }

  /** Empties the slot if it still holds what this replica wrote at `revision`. */
  async release(revision: number): Promise<void> {
    try {
      await this.kv.update(KEY, encode({ idle: true }), revision);
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
  }
}
