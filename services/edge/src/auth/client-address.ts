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

/**
 * Headers only browsers send (pages cannot remove them): `Origin` on every WebSocket upgrade
 * and cross-origin request, `Sec-Fetch-Site` on every request of a modern browser. Not
 * `Sec-Fetch-Mode`: Node's own fetch sends that one, and local tools use it.
 */
const BROWSER_HEADERS = ["origin", "sec-fetch-site"] as const;

export function isBrowserRequest(headers: HeaderBag): boolean {
  return BROWSER_HEADERS.some((name) => headers[name] !== undefined);
}

/**
 * `name[:port]` where name is a DNS name or IPv4 address, `[ipv6][:port]`, or a bare IPv6
 * literal; the port, when present, is 1-5 digits. Anything else (`localhost:evil.com`,
 * `localhost:80@evil.com`, `a b`) is not a host at all.
 */
const HOST_WITH_PORT = /^(?:\[([0-9a-f:.]+)\]|([a-z0-9._-]+))(?::(\d{1,5}))?$/;

/** The host name of a Host header value or URL authority, lowercased and without its port. */
export function parseHost(value: string | undefined): string | undefined {
  const host = value?.trim().toLowerCase();
  if (!host) return undefined;
  if (isIP(host) === 6) return host;
  const match = HOST_WITH_PORT.exec(host);
  if (!match) return undefined;
  if (match[3] !== undefined && Number(match[3]) > 65535) return undefined;
  if (match[1] !== undefined) return isIP(match[1]) === 6 ? match[1] : undefined;
  return match[2];
}

export interface RequestTarget {
  /** The path without the query. */
  path: string;
  /** The host name the request was sent to, or undefined when there is none or it is malformed. */
  host: string | undefined;
  /** The same with its port as sent (`127.0.0.1:18789`), lowercased: what an Origin is compared to. */
  authority: string | undefined;
}

/**
 * Where a request was sent (RFC 9112 §3.2): an absolute-form target
 * (`POST http://evil.example/api HTTP/1.1`) names the host itself and its Host header is
 * ignored; otherwise the Host header names it.
 */
export function requestTarget(rawUrl: string | undefined, headers: HeaderBag): RequestTarget {
  const url = rawUrl ?? "/";
  if (url.startsWith("/")) {
    const query = url.indexOf("?");
    const authority = headerValue(headers, "host")?.trim().toLowerCase();
    return { path: query === -1 ? url : url.slice(0, query), host: parseHost(authority), authority };
  }
  try {
    const absolute = new URL(url);
    // URL has already decoded the authority; userinfo in a request target is never valid.
    if (absolute.username || absolute.password || !/^(?:https?|wss?):$/.test(absolute.protocol)) {
      return { path: absolute.pathname, host: undefined, authority: undefined };
    }
    return { path: absolute.pathname, host: parseHost(absolute.host), authority: absolute.host };
  } catch {
    return { path: url, host: undefined, authority: undefined };
  }
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
