import { GatewayError } from "@gw/contracts";
import type { KV } from "@nats-io/kv";
import type { SessionMeta } from "../model.js";

/**
 * Every session's metadata, kept current by a KV watch, so `sessions.list` sorts memory instead
 * of reading 10,000 keys and `sessions.preview` of an unchanged session reads nothing. A read
 * first waits until the watch has caught up with the bucket's last sequence as of a moment after
 * the read began (one stream-info request, shared by every read waiting at the time), so it
 * always shows writes acknowledged before it, whichever replica made them.
 */
export class MetaIndex {
  private readonly metas = new Map<string, SessionMeta>();
  private seen = 0;
  private stopWatch: (() => void) | undefined;
  private waiters: Array<() => void> = [];
  /** The bucket's last sequence, being asked for now. */
  private asking: Promise<number> | undefined;
  /** The next question, for reads that began after `asking` was sent. */
  private nextAsk: Promise<number> | undefined;

  constructor(
    private readonly kv: KV,
    private readonly decode: (value: Uint8Array) => SessionMeta | undefined,
  ) {}

  async start(): Promise<void> {
    const iter = await this.kv.watch();
    this.stopWatch = () => iter.stop();
    void (async () => {
      for await (const entry of iter) {
        const meta = entry.operation === "PUT" ? this.decode(entry.value) : undefined;
        if (meta) this.metas.set(entry.key, meta);
        else this.metas.delete(entry.key);
        this.seen = Math.max(this.seen, entry.revision);
        for (const wake of this.waiters.splice(0)) wake();
      }
    })();
  }

  async all(timeoutMs = 5_000): Promise<SessionMeta[]> {
    if (!(await this.caughtUp(timeoutMs)))
      throw new GatewayError("UNAVAILABLE", "the session index is catching up; try again");
    return [...this.metas.values()];
  }

  /**
   * One session's metadata (by its KV key) as current as a fresh read: null when there is no
   * such session, undefined when the index could not catch up in time (read the bucket instead).
   * The object is shared: never change it.
   */
  async get(kvKey: string, timeoutMs = 1_000): Promise<SessionMeta | null | undefined> {
    if (!(await this.caughtUp(timeoutMs))) return undefined;
    return this.metas.get(kvKey) ?? null;
  }

  stop(): void {
    this.stopWatch?.();
  }

  /** Whether the watch has applied every write the bucket held at some moment after this call. */
  private async caughtUp(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    const target = await this.lastSequence();
    while (this.seen < target) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 100));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return true;
  }

  /**
   * The bucket's last sequence, asked after this call began. A question already on its way may
   * have left before a write this caller saw acknowledged, so callers that arrive meanwhile
   * share the next one: under load one stream-info request serves a whole batch of reads.
   */
  private lastSequence(): Promise<number> {
    this.nextAsk ??= (async () => {
      await this.asking?.catch(() => undefined);
      const ask = this.kv.status().then((status) => status.streamInfo.state.last_seq);
      this.nextAsk = undefined;
      this.asking = ask;
      try {
        return await ask;
      } finally {
        if (this.asking === ask) this.asking = undefined;
      }
    })();
    return this.nextAsk;
  }
}
