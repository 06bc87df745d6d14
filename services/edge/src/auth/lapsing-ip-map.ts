/** Entries remembered at most; past it the oldest go (a spray of IPs cannot grow memory). */
const MAX_ENTRIES = 100_000;

/** Per-client-IP entries that lapse at their `until` (this process's clock). */
export class LapsingIpMap<V extends { until: number }> {
  private readonly entries = new Map<string, V>();

  get(ip: string): V | undefined {
    const entry = this.entries.get(ip);
    if (entry === undefined || entry.until > Date.now()) return entry;
    this.entries.delete(ip);
    return undefined;
  }

  set(ip: string, entry: V): void {
    if (this.entries.size >= MAX_ENTRIES && !this.entries.has(ip)) this.evict();
    this.entries.set(ip, entry);
  }

  delete(ip: string): void {
    this.entries.delete(ip);
  }

  private evict(): void {
    const now = Date.now();
    for (const [ip, entry] of this.entries) if (entry.until <= now) this.entries.delete(ip);
    while (this.entries.size >= MAX_ENTRIES) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }
}
