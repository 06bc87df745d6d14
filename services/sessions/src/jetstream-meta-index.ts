import { GatewayError } from "@gw/contracts";
import type { KV } from "@nats-io/kv";
import type { SessionMeta } from "./model.js";

/**
 * Every session's metadata, kept current by a KV watch, so `sessions.list` sorts memory instead
 * of reading 10,000 keys. Reads first wait until the watch has caught up with the bucket's last
 * sequence (one stream-info request), so a list always shows writes acknowledged before it,
 * whichever replica made them.
 */
export class MetaIndex {
  private readonly metas = new Map<string, SessionMeta>();
  private seen = 0;
  private stopWatch: (() => void) | undefined;
  private waiters: Array<() => void> = [];

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
    const target = (await this.kv.status()).streamInfo.state.last_seq;
    const deadline = Date.now() + timeoutMs;
    while (this.seen < target) {
      const left = deadline - Date.now();
      if (left <= 0) throw new GatewayError("UNAVAILABLE", "the session index is catching up; try again");
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 100));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return [...this.metas.values()];
  }

  stop(): void {
    this.stopWatch?.();
  }
}
