import { BlockList, isIP } from "node:net";

/** Headers that show a request passed through a proxy; their presence disables loopback trust. */
export const FORWARDING_HEADERS = [
  "forwarded",
  "x-forwarded-for",
  "x-forwarded-host",
  "x-forwarded-proto",
  "x-real-ip",
  "x-client-ip",
  "true-client-ip",
  "cf-connecting-ip",
] as const;

export type HeaderBag = Record<string, string | string[] | undefined>;

/** `::ffff:127.0.0.1` -> `127.0.0.1`, so one address has one spelling in limiter keys. */
export function normalizeIp(address: string | undefined): string {
  if (!address) return "unknown";
  const lower = address.toLowerCase();
  if (lower.startsWith("::ffff:") && isIP(lower.slice(7)) === 4) return lower.slice(7);
  return lower;
}

export function isLoopbackIp(ip: string): boolean {
  return ip === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(ip);
}

function headerValue(headers: HeaderBag, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export function hasForwardingHeaders(headers: HeaderBag): boolean {
  return FORWARDING_HEADERS.some((name) => headers[name] !== undefined);
}

/** Host header without its port: `localhost:18789` -> `localhost`, `[::1]:80` -> `::1`. */
export function hostName(headers: HeaderBag): string | undefined {
  const host = headerValue(headers, "host")?.trim().toLowerCase();
  if (!host) return undefined;
  if (host.startsWith("[")) return host.slice(1, host.indexOf("]") === -1 ? undefined : host.indexOf("]"));
  if (isIP(host) === 6) return host;
  const colon = host.lastIndexOf(":");
  return colon === -1 ? host : host.slice(0, colon);
}

export class TrustedProxies {
  private readonly list = new BlockList();
  private readonly empty: boolean;

  /** Entries are addresses or CIDR ranges (`10.0.0.0/8`, `fd00::/8`), already validated by the config schema. */
  constructor(entries: readonly string[]) {
    this.empty = entries.length === 0;
    for (const entry of entries) {
      const [address, prefix] = entry.split("/");
      const family = isIP(address ?? "") === 6 ? "ipv6" : "ipv4";
      if (prefix === undefined) this.list.addAddress(address!, family);
      else this.list.addSubnet(address!, Number(prefix), family);
    }
  }

  has(ip: string): boolean {
    if (this.empty) return false;
    const family = isIP(ip);
    if (family === 0) return false;
    return this.list.check(ip, family === 6 ? "ipv6" : "ipv4");
  }

  /**
   * The client address: the socket peer, unless the peer is a trusted proxy, in which
   * case the right-most X-Forwarded-For entry that is not itself a trusted proxy.
   */
  clientIp(remoteAddress: string | undefined, headers: HeaderBag): string {
    const peer = normalizeIp(remoteAddress);
    if (!this.has(peer)) return peer;
    const chain = (headerValue(headers, "x-forwarded-for") ?? "")
      .split(",")
      .map((part) => normalizeIp(part.trim()))
      .filter((part) => isIP(part) !== 0);
    for (let i = chain.length - 1; i >= 0; i--) {
      if (!this.has(chain[i]!)) return chain[i]!;
    }
    return chain[0] ?? peer;
  }
}
