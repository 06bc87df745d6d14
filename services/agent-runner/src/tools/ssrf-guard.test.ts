import type { LookupAddress } from "node:dns";
import { describe, expect, it } from "vitest";
import { guardedLookup, isPrivateAddress, literalRefusal, type SsrfPolicy } from "./ssrf-guard.js";

const STRICT: SsrfPolicy = { allowHosts: [], allowPrivateNetworks: false };

/** The host part exactly as http.request sees it after WHATWG URL parsing. */
const hostOf = (url: string) => new URL(url).hostname;

function lookup(policy: SsrfPolicy, host: string): Promise<{ err: NodeJS.ErrnoException | null; addresses: LookupAddress[] }> {
  return new Promise((resolve) => {
    guardedLookup(policy, host)(host, { all: true }, (err, address) =>
      resolve({ err, addresses: Array.isArray(address) ? address : [] }),
    );
  });
}

describe("isPrivateAddress", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback /8"],
    ["0.0.0.0", "this host"],
    ["10.0.0.1", "10/8"],
    ["10.255.255.255", "10/8"],
    ["172.16.0.1", "172.16/12"],
    ["172.31.255.255", "172.16/12"],
    ["192.168.1.1", "192.168/16"],
    ["169.254.169.254", "link-local (cloud metadata)"],
    ["100.64.0.1", "CGNAT"],
    ["224.0.0.1", "multicast"],
    ["::1", "IPv6 loopback"],
    ["::", "IPv6 unspecified"],
    ["fc00::1", "unique local fc00::/7"],
    ["fdff:ffff::1", "unique local fc00::/7"],
    ["fe80::1", "link-local fe80::/10"],
    ["febf::1", "link-local fe80::/10"],
    ["ff02::1", "IPv6 multicast"],
    ["::ffff:127.0.0.1", "IPv4-mapped loopback, dotted"],
    ["::ffff:7f00:1", "IPv4-mapped loopback, hex"],
    ["::FFFF:10.0.0.1", "IPv4-mapped private, upper case"],
    ["::ffff:a9fe:a9fe", "IPv4-mapped link-local, hex"],
    ["not-an-address", "anything unparsable"],
  ])("refuses %s (%s)", (address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });

  it.each(["8.8.8.8", "1.1.1.1", "172.32.0.1", "172.15.255.255", "192.169.0.1", "11.0.0.1", "2606:4700::1111", "::ffff:8.8.8.8"])(
    "allows the public address %s",
    (address) => {
      expect(isPrivateAddress(address)).toBe(false);
    },
  );
});

describe("literalRefusal (IP literals in URLs, which never reach lookup)", () => {
  it.each([
    "http://127.0.0.1/",
    "http://0.0.0.0/",
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[fe80::1]/",
    "http://2130706433/",
    "http://0x7f.1/",
    "http://10.1.2.3:8080/",
  ])("refuses %s", (url) => {
    const err = literalRefusal(STRICT, hostOf(url));
    expect(err?.code).toBe("ESSRF");
    expect(err?.message).toMatch(/non-public address/);
  });

  it("passes public literals and names (those are checked at lookup)", () => {
    expect(literalRefusal(STRICT, hostOf("http://8.8.8.8/"))).toBeUndefined();
    expect(literalRefusal(STRICT, hostOf("http://[2606:4700::1111]/"))).toBeUndefined();
    expect(literalRefusal(STRICT, "example.com")).toBeUndefined();
  });

  it("allows a configured host, or every private network when configured", () => {
    expect(literalRefusal({ allowHosts: ["127.0.0.2"], allowPrivateNetworks: false }, "127.0.0.2")).toBeUndefined();
    expect(literalRefusal({ allowHosts: ["127.0.0.2"], allowPrivateNetworks: false }, "127.0.0.3")).toBeDefined();
    expect(literalRefusal({ allowHosts: [], allowPrivateNetworks: true }, "10.0.0.1")).toBeUndefined();
  });
});

describe("guardedLookup (names, checked at connect time)", () => {
  // The resolver is not injectable; `localhost` resolves to loopback from /etc/hosts, no network.
  it("refuses a name that resolves to a private address", async () => {
    const { err } = await lookup(STRICT, "localhost");
    expect(err?.code).toBe("ESSRF");
    expect(err?.message).toMatch(/refusing to fetch localhost: it resolves to the non-public address/);
  });

  it("resolves an allowed host (case-insensitively) and anything under allowPrivateNetworks", async () => {
    const allowed = await lookup({ allowHosts: ["localhost"], allowPrivateNetworks: false }, "LocalHost");
    expect(allowed.err).toBeNull();
    expect(allowed.addresses.length).toBeGreaterThan(0);
    const open = await lookup({ allowHosts: [], allowPrivateNetworks: true }, "localhost");
    expect(open.err).toBeNull();
  });

  it("answers in the single-address form when `all` is not asked for", async () => {
    const answer = await new Promise<unknown[]>((resolve) => {
      guardedLookup({ allowHosts: ["localhost"], allowPrivateNetworks: false }, "localhost")("localhost", {}, (...args) =>
        resolve(args),
      );
    });
    expect(answer[0]).toBeNull();
    expect(typeof answer[1]).toBe("string");
    expect([4, 6]).toContain(answer[2]);
  });
});
