import { type LookupAddress, promises as dns } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import { Agent, buildConnector, fetch as undiciFetch } from "undici";
import { classifyAddress, describeAddress } from "./address-class.js";
import { SsrfError } from "./http-error.js";

/**
 * Where a URL that came from outside (a user, a model, a platform payload) may lead. By default
 * only public addresses; tests and deployments that must reach a private host name it.
 */
export interface SsrfPolicy {
  /** Host names or IP literals, as in URLs (case-insensitive), that may resolve anywhere. */
  allowHosts?: readonly string[];
  /** Switches the address check off (a lab network). The scheme is still checked. */
  allowPrivateNetworks?: boolean;
}

export const STRICT_SSRF_POLICY: SsrfPolicy = Object.freeze({ allowHosts: Object.freeze([]), allowPrivateNetworks: false });

/** `[::1]` as URLs spell it -> `::1`; names compare case-insensitively. */
function bareHost(host: string): string {
  return host.replace(/^\[(.*)\]$/, "$1").toLowerCase();
}

function isTrusted(policy: SsrfPolicy, host: string): boolean {
  if (policy.allowPrivateNetworks) return true;
  const bare = bareHost(host);
  return (policy.allowHosts ?? []).some((allowed) => bareHost(allowed) === bare);
}

function refusal(host: string, address: string, url?: string): SsrfError {
  const cls = classifyAddress(address);
  return new SsrfError(`refusing to fetch ${host}: it resolves to the non-public address ${address} (${describeAddress(cls)})`, url);
}

/**
 * The check for a host that is an IP literal. Node connects to a literal without calling
 * `lookup`, so it is checked here, before connecting; names are checked at lookup.
 */
export function checkHost(host: string, policy: SsrfPolicy): SsrfError | undefined {
  const address = bareHost(host);
  if (isIP(address) === 0 || isTrusted(policy, host)) return undefined;
  return classifyAddress(address).public ? undefined : refusal(host, address);
}

/**
 * Parses and checks a URL from outside: http or https only, and an IP-literal host must be
 * public (the WHATWG parser has already turned `2130706433`, `0x7f.1` and `0177.0.0.1` into
 * `127.0.0.1`). Host names pass here; the connection's lookup checks what they resolve to.
 */
export function guardUrl(url: string | URL, policy: SsrfPolicy): URL {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new SsrfError(`refusing to fetch an invalid URL`);
  }
  if (target.protocol !== "http:" && target.protocol !== "https:")
    throw new SsrfError(`refusing to fetch ${target.protocol} URLs: only http and https are allowed`);
  const refused = checkHost(target.hostname, policy);
  if (refused) throw refused;
  return target;
}

/** Every address a name resolves to; injectable so tests can play a rebinding resolver. */
export type ResolveAll = (hostname: string, family: number) => Promise<LookupAddress[]>;

const systemResolver: ResolveAll = (hostname, family) => dns.lookup(hostname, { all: true, family });

/**
 * A `lookup` for net/tls connections that fails when any address a name resolves to is not
 * public. It runs on every new connection, so a name that resolves differently the second time
 * (DNS rebinding) is caught at the moment it would be used.
 */
export function guardedLookup(policy: SsrfPolicy, resolve: ResolveAll = systemResolver): LookupFunction {
  return (hostname, options, callback) => {
    const family = options.family === "IPv4" ? 4 : options.family === "IPv6" ? 6 : (options.family ?? 0);
    resolve(hostname, family).then(
      (addresses) => {
        const trusted = isTrusted(policy, hostname);
        const blocked = trusted ? undefined : addresses.find((a) => !classifyAddress(a.address).public);
        if (blocked) return callback(refusal(hostname, blocked.address), []);
        const first = addresses[0];
        if (first === undefined) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: "ENOTFOUND" }), []);
        if (options.all) callback(null, addresses);
        else callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, []),
    );
  };
}

/**
 * An undici Agent (a keep-alive pool) that connects only where the policy allows: IP literals
 * are checked before connecting, names after resolution, on every new connection.
 */
export function createGuardedAgent(policy: SsrfPolicy, options: Agent.Options = {}, resolve?: ResolveAll): Agent {
  const connector = buildConnector({ lookup: guardedLookup(policy, resolve) });
  return new Agent({
    ...options,
    connect: (opts, callback) => {
      const refused = checkHost(opts.hostname, policy);
      if (refused) return callback(refused, null);
      connector(opts, callback);
    },
  });
}

/**
 * A WHATWG `fetch` that connects only where the policy allows (through createGuardedAgent), for
 * libraries that take a fetch rather than an HttpClient (the MCP SDK's HTTP transport).
 */
export function createGuardedFetch(policy: SsrfPolicy): typeof fetch {
  const dispatcher = createGuardedAgent(policy);
  const guarded = (input: string | URL | Request, init?: RequestInit) => {
    const target = input instanceof Request ? input.url : input;
    guardUrl(target, policy);
    return undiciFetch(target, { ...(init as object), dispatcher } as Parameters<typeof undiciFetch>[1]);
  };
  return guarded as unknown as typeof fetch;
}
