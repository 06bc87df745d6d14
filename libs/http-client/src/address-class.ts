import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

/** How an IPv6 address carries an IPv4 one. */
export type EmbeddingKind = "ipv4-mapped" | "ipv4-translated" | "ipv4-compatible" | "nat64" | "6to4" | "teredo";

export interface AddressClass {
  address: string;
  /** ipaddr.js's range name (`unicast`, `loopback`, `private`, `6to4`, …), or `invalid`. */
  range: string;
  /** The IPv4 addresses an IPv6 form leads to, each with its own range. */
  embedded: Array<{ kind: EmbeddingKind; ipv4: string; range: string }>;
  /** Reachable on the public internet, embedded destinations included. */
  public: boolean;
}

function ipv4At(parts: readonly number[], high: number, xor = 0): ipaddr.IPv4 {
  const hi = (parts[high]! ^ xor) & 0xffff;
  const lo = (parts[high + 1]! ^ xor) & 0xffff;
  return new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
}

/**
 * ipaddr.js reads the deprecated `::a.b.c.d` as `::ffff:a.b.c.d`; the URL parser's canonical
 * all-hex spelling keeps the two apart. A zone (`%eth0`) changes nothing about the range.
 */
function hexIpv6(address: string): string {
  const bare = address.replace(/%.*$/, "");
  try {
    return new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  } catch {
    return bare;
  }
}

const zero = (parts: readonly number[], from: number, to: number) => parts.slice(from, to).every((p) => p === 0);

/**
 * The IPv4 destinations hidden in an IPv6 address. Each is a way to reach an IPv4 host (a
 * gateway's NAT64, a 6to4 relay, Teredo, the host's own dual stack), so `64:ff9b::7f00:1`,
 * `2002:7f00:1::` and `::127.0.0.1` are loopback as much as `127.0.0.1` is.
 */
function embeddedIpv4(ip: ipaddr.IPv6, range: string): Array<{ kind: EmbeddingKind; ipv4: ipaddr.IPv4 }> {
  const p = ip.parts;
  switch (range) {
    case "ipv4Mapped": // ::ffff:a.b.c.d
      return [{ kind: "ipv4-mapped", ipv4: ip.toIPv4Address() }];
    case "rfc6145": // ::ffff:0:a.b.c.d (SIIT)
      return [{ kind: "ipv4-translated", ipv4: ipv4At(p, 6) }];
    case "rfc6052": // 64:ff9b::a.b.c.d; the local-use 64:ff9b:1::/48 has no fixed layout and stays refused
      return zero(p, 2, 6) ? [{ kind: "nat64", ipv4: ipv4At(p, 6) }] : [];
    case "6to4": // 2002:AABB:CCDD::/48 routes to a.b.c.d
      return [{ kind: "6to4", ipv4: ipv4At(p, 1) }];
    case "teredo": // 2001:0:SERVER:flags:port:~CLIENT
      return [
        { kind: "teredo", ipv4: ipv4At(p, 2) },
        { kind: "teredo", ipv4: ipv4At(p, 6, 0xffff) },
      ];
    default: // ::a.b.c.d, deprecated IPv4-compatible; `::` and `::1` have ranges of their own
      return zero(p, 0, 6) && range === "unicast" ? [{ kind: "ipv4-compatible", ipv4: ipv4At(p, 6) }] : [];
  }
}

/**
 * Classifies an IP address (canonical text as Node's resolver and URL parser give it) by the
 * special-purpose ranges ipaddr.js maintains. Only `unicast` is public: private, loopback,
 * link-local, unique-local, multicast, CGNAT, unspecified, reserved, documentation and
 * benchmarking space are not. An IPv6 form that embeds an IPv4 address is judged by that
 * address instead. Anything that is not an address is not public.
 */
export function classifyAddress(address: string): AddressClass {
  const family = isIP(address);
  if (family === 0) return { address, range: "invalid", embedded: [], public: false };
  const ip = ipaddr.parse(family === 6 ? hexIpv6(address) : address);
  const range = ip.range() as string;
  if (ip.kind() === "ipv4") return { address, range, embedded: [], public: range === "unicast" };
  const embedded = embeddedIpv4(ip as ipaddr.IPv6, range).map(({ kind, ipv4 }) => ({
    kind,
    ipv4: ipv4.toString(),
    range: ipv4.range() as string,
  }));
  const isPublic = embedded.length > 0 ? embedded.every((e) => e.range === "unicast") : range === "unicast";
  return { address, range, embedded, public: isPublic };
}

export function isPublicAddress(address: string): boolean {
  return classifyAddress(address).public;
}

/** Why an address is refused, for error messages: `loopback`, `6to4 of private 10.0.0.1`. */
export function describeAddress(cls: AddressClass): string {
  const hidden = cls.embedded.find((e) => e.range !== "unicast");
  return hidden ? `${hidden.kind} of ${hidden.range} ${hidden.ipv4}` : cls.range;
}
