import { randomUUID } from "node:crypto";
import type { DurableKv } from "@gw/store";
import { z } from "zod";

/** A text waiting for the main session's next heartbeat turn. */
export interface WakeEvent {
  key: string;
  text: string;
  /** Who queued it: "wake", or "hooks/<mapping path>". */
  source: string;
  /** Epoch ms it was queued. */
  at: number;
}

const StoredEventSchema = z.object({ text: z.string(), source: z.string(), at: z.number() });

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Keys sort in the order texts were queued: zero-padded epoch ms, then a random tie-breaker. */
function newKey(now: number): string {
  return `${String(now).padStart(15, "0")}-${randomUUID()}`;
}

/**
 * The wake texts queued for the main session (`mode: "next-heartbeat"`, and "now" until its
 * turn has taken them), in the durable store: JetStream KV in distributed mode, files in
 * embedded mode, so a queued text survives a crash of the hooks service. A heartbeat turn takes
 * the oldest ones and removes them only once its run is queued (heartbeat.ts).
 */
export class WakeQueue {
  constructor(private readonly kv: DurableKv) {}

  /** Stores a text; resolves once it is durable. */
  async add(text: string, source: string): Promise<string> {
    const at = Date.now();
    const key = newKey(at);
    await this.kv.create(key, Buffer.from(JSON.stringify({ text, source, at }), "utf8"));
    return key;
  }

  async oldestKeys(max: number): Promise<string[]> {
    return (await this.kv.keys()).sort().slice(0, max);
  }

  /**
   * The events still queued under `keys`, in queue order; removed ones are skipped, and so is an
   * entry that cannot be read (it is removed with the rest of its turn rather than block every
   * heartbeat after it).
   */
  async read(keys: readonly string[]): Promise<WakeEvent[]> {
    const entries = await Promise.all(keys.map(async (key) => ({ key, entry: await this.kv.get(key) })));
    const events: WakeEvent[] = [];
    for (const { key, entry } of entries) {
      if (entry === null) continue;
      const parsed = StoredEventSchema.safeParse(parseJson(Buffer.from(entry.value).toString("utf8")));
      if (parsed.success) events.push({ key, ...parsed.data });
    }
    return events.sort((a, b) => (a.key < b.key ? -1 : 1));
  }

  async has(key: string): Promise<boolean> {
    return (await this.kv.get(key)) !== null;
  }

  async remove(keys: readonly string[]): Promise<void> {
    for (const key of keys) await this.kv.delete(key);
  }

  async size(): Promise<number> {
    return (await this.kv.keys()).length;
  }
}
