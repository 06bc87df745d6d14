import { describe, expect, it } from "vitest";
import { classifyAddress, isPublicAddress } from "./address-class.js";

describe("classifyAddress: what the SSRF guard refuses", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "unspecified"],
    ["10.0.0.1", "private"],
    ["10.255.255.255", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "linkLocal"],
    ["100.64.0.1", "carrierGradeNat"],
    ["100.127.255.255", "carrierGradeNat"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["240.0.0.1", "reserved"],
    ["192.0.2.1", "reserved"],
    ["198.18.0.1", "reserved"],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["fc00::1", "uniqueLocal"],
    ["fdff:ffff::1", "uniqueLocal"],
    ["fe80::1", "linkLocal"],
    ["febf::1", "linkLocal"],
    ["fe80::1%eth0", "linkLocal"],
    ["ff02::1", "multicast"],
    ["2001:db8::1", "reserved"],
    ["64:ff9b:1::a00:1", "rfc6052"],
  ])("refuses %s (%s)", (address, range) => {
    const cls = classifyAddress(address);
    expect(cls.range).toBe(range);
    expect(cls.public).toBe(false);
  });

  it.each([
    ["::ffff:127.0.0.1", "ipv4-mapped", "127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "ipv4-mapped", "127.0.0.1", "loopback"],
    ["::FFFF:10.0.0.1", "ipv4-mapped", "10.0.0.1", "private"],
    ["::ffff:a9fe:a9fe", "ipv4-mapped", "169.254.169.254", "linkLocal"],
    ["::ffff:0:7f00:1", "ipv4-translated", "127.0.0.1", "loopback"],
    ["::127.0.0.1", "ipv4-compatible", "127.0.0.1", "loopback"],
    ["::7f00:1", "ipv4-compatible", "127.0.0.1", "loopback"],
    ["::a00:1", "ipv4-compatible", "10.0.0.1", "private"],
    ["64:ff9b::7f00:1", "nat64", "127.0.0.1", "loopback"],
    ["64:ff9b::127.0.0.1", "nat64", "127.0.0.1", "loopback"],
    ["64:ff9b::a9fe:a9fe", "nat64", "169.254.169.254", "linkLocal"],
    ["2002:7f00:1::", "6to4", "127.0.0.1", "loopback"],
    ["2002:c0a8:101::1", "6to4", "192.168.1.1", "private"],
    // Teredo: server 8.8.8.8 (public), client ~0x7ffffffe = 127.0.0.1
    ["2001:0:808:808::80ff:fffe", "teredo", "127.0.0.1", "loopback"],
  ])("refuses %s, a %s form of %s (%s)", (address, kind, ipv4, range) => {
    const cls = classifyAddress(address);
    expect(cls.public).toBe(false);
    expect(cls.embedded).toContainEqual({ kind, ipv4, range });
  });

  it.each(["not-an-address", "", "127.1", "0x7f.0.0.1", "2130706433", "localhost", "[::1]", "1.2.3.4.5"])(
    "refuses %j, which is not an address in canonical form",
    (text) => {
      expect(classifyAddress(text)).toMatchObject({ range: "invalid", public: false });
    },
  );

  it.each([
    "8.8.8.8",
    "1.1.1.1",
    "172.32.0.1",
    "172.15.255.255",
    "192.169.0.1",
    "11.0.0.1",
    "100.128.0.1",
    "2606:4700::1111",
    "2a00:1450:4001:80e::200e",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
    "2002:808:808::1",
    "2001:0:808:808::f7f7:f7f7",
  ])("allows the public address %s", (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });
});
