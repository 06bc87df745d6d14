import { isGatewayError } from "@gw/contracts";
import type { DurableKv, DurableStore } from "@gw/store";
import { z } from "zod";

/** The durable bucket of receivers' cursors (JetStream KV in distributed mode, files embedded). */
export const CURSOR_BUCKET = "inbound_cursors";

const RecordSchema = z.object({
  /** Where the receiver resumes; absent until its first batch was stored. */
  cursor: z.string().optional(),
  /** Raised by one at every takeover: only the tenure that raised it last may move the cursor. */
  fence: z.number().int().nonnegative(),
  holder: z.string(),
  at: z.number(),
});
export type CursorRecord = z.output<typeof RecordSchema>;

/** A later tenure began: this holder lost its lease and must stop without touching the cursor. */
export class FencedOut extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FencedOut";
  }
}

/** Compare-and-set rounds before giving up: each lost round means another writer went first. */
const MAX_ROUNDS = 20;

/**
 * Each receiver's cursor, with a fencing token kept beside it. The token lives in the durable
 * store, next to what it guards, rather than in Redis: a Redis that lost its data would hand out
 * tokens from 1 again, below the stored one, and fence every holder out for good. Every write is
 * a compare-and-set on the record's revision, so the fence check and the write are one step:
 * once a new tenure has raised the fence, no write of an older tenure can land.
 */
export class ReceiverCursors {
  private constructor(private readonly kv: DurableKv) {}

  static async open(durable: DurableStore): Promise<ReceiverCursors> {
    return new ReceiverCursors(await durable.kv(CURSOR_BUCKET));
  }

  async read(key: string): Promise<CursorRecord | null> {
    return (await this.load(key))?.record ?? null;
  }

  /** Begins a tenure for `holder`: raises the fence and returns it with the cursor to resume from. */
  async takeOver(key: string, holder: string): Promise<{ fence: number; cursor: string | undefined }> {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const current = await this.load(key);
      const fence = (current?.record.fence ?? 0) + 1;
      const record: CursorRecord = { ...current?.record, fence, holder, at: Date.now() };
      if (await this.write(key, record, current?.revision)) return { fence, cursor: record.cursor };
      // The old tenure stored a batch in between; step out of its rhythm before the next round.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10));
    }
    throw new Error(`could not take over the cursor of ${key}: it kept changing under us`);
  }

  /** Stores `cursor` for the tenure holding `fence`; throws FencedOut once a later tenure began. */
  async advance(key: string, fence: number, cursor: string): Promise<void> {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const current = await this.load(key);
      const stored = current?.record.fence ?? 0;
      if (current === undefined || stored !== fence) {
        throw new FencedOut(`the receiver of ${key} was taken over (tenure ${stored} after ours, ${fence})`);
      }
      if (await this.write(key, { ...current.record, cursor, at: Date.now() }, current.revision)) return;
    }
    throw new Error(`could not store the cursor of ${key}: it kept changing under us`);
  }

  private async load(key: string): Promise<{ record: CursorRecord; revision: number } | undefined> {
    const entry = await this.kv.get(key);
    if (entry === null) return undefined;
    const parsed = RecordSchema.safeParse(parseJson(Buffer.from(entry.value).toString("utf8")));
    // A record we cannot read is replaced by the next takeover; its holder, if any, is fenced out.
    return { record: parsed.success ? parsed.data : { fence: 0, holder: "", at: 0 }, revision: entry.revision };
  }

  /** One compare-and-set; false when another writer changed the record first. */
  private async write(key: string, record: CursorRecord, revision: number | undefined): Promise<boolean> {
    const value = Buffer.from(JSON.stringify(record), "utf8");
    try {
      if (revision === undefined) await this.kv.create(key, value);
      else await this.kv.update(key, value, revision);
      return true;
    } catch (err) {
      if (isGatewayError(err) && err.code === "CONFLICT") return false;
      throw err;
    }
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
