import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { BlockList, isIP } from "node:net";

/** Addresses a server-side fetch must not reach unless configured: loopback, private, link-local & co. */
function privateRanges(): BlockList {
  const list = new BlockList();
  for (const [net, prefix] of [
    ["0.0.0.0", 8],
    ["10.0.0.0", 8],
    ["100.64.0.0", 10],
    ["127.0.0.0", 8],
    ["169.254.0.0", 16],
    ["172.16.0.0", 12],
    ["192.0.0.0", 24],
    ["192.168.0.0", 16],
    ["198.18.0.0", 15],
    ["224.0.0.0", 4],
    ["240.0.0.0", 4],
  ] as const)
    list.addSubnet(net, prefix, "ipv4");
  for (const [net, prefix] of [
    ["::", 128],
    ["::1", 128],
    ["fc00::", 7],
    ["fe80::", 10],
    ["ff00::", 8],
  ] as const)
    list.addSubnet(net, prefix, "ipv6");
  return list;
}

const PRIVATE = privateRanges();

export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return PRIVATE.check(mapped[1]!, "ipv4");
  const family = isIP(address);
  if (family === 0) return true;
  return PRIVATE.check(address, family === 4 ? "ipv4" : "ipv6");
}

export interface SsrfPolicy {
  allowHosts: readonly string[];
  allowPrivateNetworks: boolean;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

function isTrusted(policy: SsrfPolicy, host: string): boolean {
  return policy.allowPrivateNetworks || policy.allowHosts.includes(host.toLowerCase());
}

function refusal(hostname: string, address: string): NodeJS.ErrnoException {
  return Object.assign(
    new Error(`refusing to fetch ${hostname}: it resolves to the non-public address ${address}`),
    { code: "ESSRF" },
  );
}

/**
 * Node connects to an IP literal without calling `lookup`, so guardedLookup never sees
 * `http://127.0.0.1/`: such hosts are checked here, before connecting.
 */
export function literalRefusal(policy: SsrfPolicy, host: string): NodeJS.ErrnoException | undefined {
  const address = host.replace(/^\[(.*)\]$/, "$1");
  if (isIP(address) === 0 || isTrusted(policy, host)) return undefined;
  return isPrivateAddress(address) ? refusal(host, address) : undefined;
}

/**
 * A `lookup` for http.request that refuses private addresses at connect time, so a name
 * that resolves differently on a second lookup (DNS rebinding) cannot slip through.
 */
export function guardedLookup(policy: SsrfPolicy, host: string) {
  const trusted = isTrusted(policy, host);
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback) => {
    dnsLookup(hostname, { all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const blocked = trusted ? undefined : addresses.find((a) => isPrivateAddress(a.address));
      if (blocked) return callback(refusal(hostname, blocked.address), []);
      if (options.all) return callback(null, addresses);
      const first = addresses[0]!;
      callback(null, first.address, first.family);
    });
  };
}
