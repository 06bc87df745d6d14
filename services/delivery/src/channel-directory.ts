import { type ChannelAdapter, parseChannelAccounts, type RateRule } from "@gw/channels";
import { type ChannelsConfig, channelEntries, ConfigError, type ConfigIssue, type GatewayConfig } from "@gw/config";
import { GatewayError, given } from "@gw/contracts";
import { DEFAULT_MEDIA_LIMITS, type DeliveryPlugin, type HttpClientFactory, type MediaLimits } from "./channels/registry.js";
import { HttpClients } from "./http-clients.js";
import { type InboundPolicy, inboundPolicyOf } from "./sender-policy.js";

/** One account of one configured channel, with its adapter. */
export interface ChannelAccount {
  channelId: string;
  kind: string;
  accountId: string;
  adapter: ChannelAdapter;
  /** The platform's send limits (its plugin's `rates`), applied by the pacer. */
  rates: readonly RateRule[];
  /** Who may talk to the agent through this account, and which agent answers. */
  inbound: InboundPolicy;
}

export interface ChannelEntry {
  id: string;
  kind: string;
  plugin: DeliveryPlugin;
  /** In file order; the first is the default. */
  accounts: ChannelAccount[];
}

/** Where a send goes, and why there (for errors). */
export interface ResolvedTarget {
  account: ChannelAccount;
  /** How the channel was chosen: SPEC §4.1 resolution order. */
  via: "channel" | "sessionKey" | "default";
}

/**
 * Every configured channel and account, built at start: an unknown `kind` or a bad setting
 * stops the process with the key path (DESIGN §9, like the model-provider registry).
 */
export class ChannelDirectory {
  private constructor(
    private readonly channels: ReadonlyMap<string, ChannelEntry>,
    readonly defaultChannel: string | undefined,
    /** Every plugin this build ships, configured or not. */
    readonly plugins: readonly DeliveryPlugin[],
  ) {}

  static build(
    config: ChannelsConfig,
    plugins: readonly DeliveryPlugin[],
    http: HttpClientFactory,
    media: MediaLimits = DEFAULT_MEDIA_LIMITS,
  ): ChannelDirectory {
    const channels = new Map<string, ChannelEntry>();
    // Every channel's problems at once, so one round of fixes is enough.
    const issues: ConfigIssue[] = [];
    for (const [id, channel] of channelEntries(config)) {
      const plugin = plugins.find((each) => each.kind === channel.kind);
      if (plugin === undefined) {
        const known = plugins.map((each) => each.kind).sort().join(", ");
        issues.push({ path: `channels.${id}.kind`, message: `unknown channel kind "${channel.kind}" (known: ${known})` });
        continue;
      }
      let accounts: ChannelAccount[];
      try {
        accounts = parseChannelAccounts(id, channel, plugin.settings).map(({ accountId, settings }) => ({
          channelId: id,
          kind: channel.kind,
          accountId,
          adapter: plugin.create({ channelId: id, accountId, settings, http, media }),
          rates: plugin.rates,
          inbound: inboundPolicyOf(settings),
        }));
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        issues.push(...err.issues);
        continue;
      }
      channels.set(id, { id, kind: channel.kind, plugin, accounts });
    }
    if (issues.length > 0) throw new ConfigError("channels", issues);
    return new ChannelDirectory(channels, config.default, plugins);
  }

  list(): ChannelEntry[] {
    return [...this.channels.values()];
  }

  /** One configured channel, or undefined. */
  channel(id: string): ChannelEntry | undefined {
    return this.channels.get(id);
  }

  /** One account of one channel ("" or absent: the channel's default account), or undefined. */
  account(channelId: string, accountId = ""): ChannelAccount | undefined {
    const entry = this.channels.get(channelId);
    if (entry === undefined) return undefined;
    return accountId === "" ? entry.accounts[0] : entry.accounts.find((a) => a.accountId === accountId);
  }

  /**
   * SPEC §4.1 channel resolution: the explicit channel, else the session key's prefix when it
   * names a configured channel, else the configured default. Then the account: the named one,
   * else the channel's first.
   */
  resolve(req: { channel?: string | undefined; sessionKey?: string | undefined; accountId?: string | undefined }): ResolvedTarget {
    let via: ResolvedTarget["via"];
    let id = given(req.channel);
    if (id !== undefined) {
      via = "channel";
    } else {
      const sessionKey = req.sessionKey ?? "";
      const prefix = sessionKey.includes(":") ? sessionKey.slice(0, sessionKey.indexOf(":")) : "";
      via = prefix !== "" && this.channels.has(prefix) ? "sessionKey" : "default";
      id = via === "sessionKey" ? prefix : this.defaultChannel;
    }
    const entry = id === undefined ? undefined : this.channels.get(id);
    if (entry === undefined) {
      throw new GatewayError(
        "CHANNEL_NOT_FOUND",
        id === undefined
          ? "no channel given and no channels.default configured"
          : `channel "${id}" is not configured (configured: ${[...this.channels.keys()].join(", ") || "none"})`,
      );
    }
    const accountId = given(req.accountId);
    const account = accountId === undefined ? entry.accounts[0] : entry.accounts.find((a) => a.accountId === accountId);
    if (account === undefined) {
      throw new GatewayError(
        "CHANNEL_NOT_FOUND",
        `channel "${entry.id}" has no account "${accountId}" (accounts: ${entry.accounts.map((a) => a.accountId).join(", ")})`,
      );
    }
    return { account, via };
  }
}

/**
 * An account's `agent` must be a configured agent: found at start (and by `gateway config
 * check`), not at the first message. The path is the account's key when the account names the
 * agent, else the channel's.
 */
export function checkChannelAgents(directory: ChannelDirectory, config: Pick<GatewayConfig, "channels" | "agents">): void {
  const known = config.agents.list.map((agent) => agent.id);
  const issues = new Map<string, ConfigIssue>();
  for (const account of directory.list().flatMap((entry) => entry.accounts)) {
    const agent = account.inbound.agent;
    if (agent === undefined || known.includes(agent)) continue;
    const path = ownsKey(config.channels[account.channelId], account.accountId, "agent")
      ? `channels.${account.channelId}.accounts.${account.accountId}.agent`
      : `channels.${account.channelId}.agent`;
    issues.set(path, { path, message: `names agent "${agent}", which is not in agents.list (${known.join(", ")})` });
  }
  if (issues.size > 0) throw new ConfigError("channels", [...issues.values()]);
}

/** Whether the account sets `key` itself rather than taking the channel's. */
function ownsKey(channel: unknown, accountId: string, key: string): boolean {
  const accounts = (channel as { accounts?: unknown } | undefined)?.accounts;
  const own = typeof accounts === "object" && accounts !== null ? (accounts as Record<string, unknown>)[accountId] : undefined;
  return typeof own === "object" && own !== null && Object.hasOwn(own, key);
}

/**
 * Builds every channel's adapters the way delivery will, checks the agents they name, then lets
 * them go: how `gateway config check` finds a bad channel setting (a ConfigError with its key
 * path) before the gateway starts. Makes no network call.
 */
export async function checkChannels(
  config: Pick<GatewayConfig, "channels" | "agents">,
  plugins: readonly DeliveryPlugin[],
): Promise<ChannelEntry[]> {
  const clients = new HttpClients();
  try {
    const directory = ChannelDirectory.build(config.channels, plugins, clients.factory);
    checkChannelAgents(directory, config);
    return directory.list();
  } finally {
    await clients.close();
  }
}
