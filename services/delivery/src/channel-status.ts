import { type ChannelProbe, statusOf } from "@gw/channels";
import type { ChannelsStatusResponse } from "@gw/contracts";
import type { ChannelAccount, ChannelDirectory } from "./channel-directory.js";
import type { StatusBook } from "./status-book.js";

/** One probe may take this long before the account counts as unreachable. */
const PROBE_TIMEOUT_MS = 5_000;

interface CachedProbe {
  probe: ChannelProbe;
  at: number;
}

/**
 * `channels.status` (DESIGN §7): every channel and account, whether the platform answers
 * (the plugin's probe: Telegram getMe, Slack auth.test, ...), and the shared status book.
 * Probes are cached per replica for `probeCacheMs` so a dashboard polling the method does not
 * turn into platform traffic; `probe: true` asks now.
 */
export class ChannelStatusReporter {
  private readonly cache = new Map<string, CachedProbe>();
  private readonly running = new Map<string, Promise<CachedProbe>>();

  constructor(
    private readonly deps: { directory: ChannelDirectory; status: StatusBook; probeCacheMs: number },
  ) {}

  async report(fresh: boolean): Promise<ChannelsStatusResponse> {
    const channels = await Promise.all(
      this.deps.directory.list().map(async (entry) => ({
        id: entry.id,
        kind: entry.kind,
        isDefault: entry.id === this.deps.directory.defaultChannel,
        polls: entry.accounts[0]?.adapter.polls !== undefined,
        textChunk: entry.accounts[0]?.adapter.limits.textChunk ?? 0,
        accounts: await Promise.all(entry.accounts.map((account) => this.account(account, fresh))),
      })),
    );
    return { channels };
  }

  private async account(account: ChannelAccount, fresh: boolean) {
    const [{ probe, at }, record] = await Promise.all([
      this.probe(account, fresh),
      this.deps.status.read(account.channelId, account.accountId),
    ]);
    return {
      accountId: account.accountId,
      configured: true,
      reachable: probe.reachable,
      identity: probe.identity ?? "",
      probedAt: at,
      lastSuccessAt: record.lastSuccessAt,
      // A failed probe is the freshest error there is.
      lastError: probe.reachable ? record.lastError : (probe.error ?? "unreachable"),
      lastErrorAt: probe.reachable ? record.lastErrorAt : at,
      rateLimitedUntil: record.rateLimitedUntil > Date.now() ? record.rateLimitedUntil : 0,
      lastInboundAt: record.lastInboundAt,
      lastInboundError: record.lastInboundError,
      lastInboundErrorAt: record.lastInboundErrorAt,
      lastRoutes: record.lastRoutes,
    };
  }

  private probe(account: ChannelAccount, fresh: boolean): Promise<CachedProbe> {
    const key = `${account.channelId}:${account.accountId}`;
    const cached = this.cache.get(key);
    if (!fresh && cached !== undefined && Date.now() - cached.at < this.deps.probeCacheMs) return Promise.resolve(cached);
    const running = this.running.get(key);
    if (running !== undefined) return running;
    const started = statusOf(account.adapter, AbortSignal.timeout(PROBE_TIMEOUT_MS))
      .then((probe) => {
        const result = { probe, at: Date.now() };
        this.cache.set(key, result);
        return result;
      })
      .finally(() => this.running.delete(key));
    this.running.set(key, started);
    return started;
  }
}
