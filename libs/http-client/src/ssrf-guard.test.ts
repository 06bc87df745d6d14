import type { LookupAddress } from "node:dns";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SsrfError } from "./http-error.js";
import { checkHost, createGuardedAgent, guardedLookup, guardUrl, type ResolveAll, type SsrfPolicy } from "./ssrf-guard.js";

const STRICT: SsrfPolicy = { allowHosts: [], allowPrivateNetworks: false };

/** The host part exactly as a request sees it after WHATWG URL parsing. */
const hostOf = (url: string) => new URL(url).hostname;

function refusalOf(work: () => unknown): SsrfError | undefined {
  try {
    work();
    return undefined;
  } catch (err) {
    if (err instanceof SsrfError) return err;
    throw err;
  }
}

function lookup(
  policy: SsrfPolicy,
  host: string,
  resolve?: ResolveAll,
): Promise<{ err: NodeJS.ErrnoException | null; addresses: LookupAddress[] }> {
  return new Promise((done) => {
    guardedLookup(policy, resolve)(host, { all: true }, (err, address) =>
      done({ err, addresses: Array.isArray(address) ? address : [] }),
    );
  });
}

describe("guardUrl (schemes, and IP literals in URLs, which never reach lookup)", () => {
  it.each([
    "http://127.0.0.1/",
    "http://0.0.0.0/",
    "http://0/",
    "http://[::1]/",
    "http://[::]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[0:0:0:0:0:ffff:7f00:1]/",
    "http://[fe80::1]/",
    "http://[::127.0.0.1]/",
    "http://[64:ff9b::7f00:1]/",
    "http://[2002:7f00:1::]/",
    "http://2130706433/",
    "http://0x7f.1/",
    "http://0x7f000001/",
    "http://0177.0.0.1/",
    "http://017700000001/",
    "http://127.1/",
    "http://127.0.0.1./",
    "http://%31%32%37.0.0.1/",
    "http://10.1.2.3:8080/",
    "https://169.254.169.254/latest/meta-data/",
    "http://user:pw@192.168.0.1/",
  ])("refuses %s", (url) => {
    const err = refusalOf(() => guardUrl(url, STRICT));
    expect(err?.code).toBe("ESSRF");
    expect(err?.message).toMatch(/non-public address/);
    expect(err?.retryable).toBe(false);
  });

  it("names the embedded address in the refusal", () => {
    expect(refusalOf(() => guardUrl("http://[64:ff9b::7f00:1]/", STRICT))?.message).toBe(
      "refusing to fetch [64:ff9b::7f00:1]: it resolves to the non-public address 64:ff9b::7f00:1 (nat64 of loopback 127.0.0.1)",
    );
  });

  it.each(["file:///etc/passwd", "ftp://example.com/", "gopher://example.com/", "data:text/plain,x", "not a url"])(
    "refuses %s: http and https only",
    (url) => {
      expect(refusalOf(() => guardUrl(url, STRICT))?.code).toBe("ESSRF");
    },
  );

  it("passes public literals and names (those are checked at lookup)", () => {
    expect(guardUrl("http://8.8.8.8/", STRICT).href).toBe("http://8.8.8.8/");
    expect(guardUrl("https://[2606:4700::1111]/x", STRICT).hostname).toBe("[2606:4700::1111]");
    expect(guardUrl("https://example.com/", STRICT).hostname).toBe("example.com");
    expect(checkHost("example.com", STRICT)).toBeUndefined();
  });

  it("allows a configured host, or every private network when configured", () => {
    expect(checkHost(hostOf("http://127.0.0.2/"), { allowHosts: ["127.0.0.2"] })).toBeUndefined();
    expect(checkHost(hostOf("http://127.0.0.3/"), { allowHosts: ["127.0.0.2"] })).toBeDefined();
    expect(checkHost(hostOf("http://[::1]/"), { allowHosts: ["[::1]"] })).toBeUndefined();
    expect(checkHost("10.0.0.1", { allowHosts: [], allowPrivateNetworks: true })).toBeUndefined();
    expect(refusalOf(() => guardUrl("file:///x", { allowPrivateNetworks: true }))?.code).toBe("ESSRF");
  });
});

describe("guardedLookup (names, checked at connect time)", () => {
  // `localhost` resolves to loopback from /etc/hosts, no network.
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
      guardedLookup({ allowHosts: ["localhost"], allowPrivateNetworks: false })("localhost", {}, (...args) => resolve(args));
    });
    expect(answer[0]).toBeNull();
    expect(typeof answer[1]).toBe("string");
    expect([4, 6]).toContain(answer[2]);
  });

  it("checks every resolution, so a name rebound to a private address is caught on the next connection", async () => {
    const answers = [["93.184.215.14"], ["127.0.0.1"]];
    const rebinding: ResolveAll = async () => (answers.shift() ?? []).map((address) => ({ address, family: 4 }));
    expect((await lookup(STRICT, "rebind.test", rebinding)).err).toBeNull();
    expect((await lookup(STRICT, "rebind.test", rebinding)).err?.message).toMatch(/non-public address 127\.0\.0\.1/);
  });

  it("refuses when any one of several answers is private, and in its encoded IPv6 forms", async () => {
    for (const address of ["10.0.0.5", "::ffff:10.0.0.5", "64:ff9b::a00:5", "2002:a00:5::1", "::a00:5"]) {
      const mixed: ResolveAll = async () => [
        { address: "93.184.215.14", family: 4 },
        { address, family: address.includes(":") ? 6 : 4 },
      ];
      expect((await lookup(STRICT, "mixed.test", mixed)).err?.code, address).toBe("ESSRF");
    }
  });

  it("passes resolver failures through", async () => {
    const failing: ResolveAll = async () => {
      throw Object.assign(new Error("getaddrinfo ENOTFOUND nowhere.test"), { code: "ENOTFOUND" });
    };
    expect((await lookup(STRICT, "nowhere.test", failing)).err?.code).toBe("ENOTFOUND");
  });
});

describe("createGuardedAgent (an undici pool that checks where it connects)", () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((_req, res) => res.end("reached"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const toLocal: ResolveAll = async () => [{ address: "127.0.0.1", family: 4 }];

  async function get(agent: ReturnType<typeof createGuardedAgent>, origin: string): Promise<string> {
    try {
      const res = await agent.request({ origin, path: "/", method: "GET" });
      return await res.body.text();
    } finally {
      await agent.close();
    }
  }

  it("refuses a name that resolves to loopback, and a loopback literal, before any byte is sent", async () => {
    await expect(get(createGuardedAgent(STRICT, {}, toLocal), `http://rebind.test:${port}`)).rejects.toThrow(
      /refusing to fetch rebind\.test: it resolves to the non-public address 127\.0\.0\.1/,
    );
    await expect(get(createGuardedAgent(STRICT), `http://127.0.0.1:${port}`)).rejects.toThrow(/non-public address 127\.0\.0\.1/);
  });

  it("connects where the allow list says", async () => {
    expect(await get(createGuardedAgent({ allowHosts: ["rebind.test"] }, {}, toLocal), `http://rebind.test:${port}`)).toBe("reached");
    expect(await get(createGuardedAgent({ allowHosts: ["127.0.0.1"] }), `http://127.0.0.1:${port}`)).toBe("reached");
  });
});
