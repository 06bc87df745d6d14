import { describe, expect, it } from "vitest";
import { type AuthAttempt, type AuthSettings, authenticate, isLocalDirect } from "./authenticate.js";
import { parseHost, requestTarget, TrustedProxies } from "./client-address.js";

function settings(over: Partial<AuthSettings> = {}): AuthSettings {
  return {
    token: "tok-123456",
    password: "pw-abcdef",
    allowLoopback: true,
    overlayMode: "disabled",
    trustedProxy: { enabled: false, header: "x-forwarded-user" },
    trustedProxies: new TrustedProxies(["10.0.0.0/8"]),
    ...over,
  };
}

/** An attempt whose host is decided from its headers (and target), as the edge does. */
function attempt(over: Partial<Omit<AuthAttempt, "host">> & { target?: string } = {}): AuthAttempt {
  const { target, ...rest } = over;
  const base = { peerIp: "127.0.0.1", headers: { host: "127.0.0.1:18789" }, credential: undefined, ...rest };
  return { ...base, host: requestTarget(target ?? "/", base.headers).host };
}

describe("loopback rule (SPEC §5)", () => {
  it.each([
    ["127.0.0.1", "localhost:1"],
    ["127.0.0.1", "127.0.0.1"],
    ["::1", "[::1]:18789"],
    ["::1", "localhost"],
  ])("accepts peer %s with Host %s", (peerIp, host) => {
    expect(isLocalDirect(attempt({ peerIp, headers: { host } }))).toBe(true);
  });

  it("refuses a non-loopback peer, a foreign Host, and any forwarding header", () => {
    expect(isLocalDirect(attempt({ peerIp: "192.168.1.2" }))).toBe(false);
    expect(isLocalDirect(attempt({ headers: { host: "gateway.example.org" } }))).toBe(false);
    expect(isLocalDirect(attempt({ headers: {} }))).toBe(false);
    for (const h of ["x-forwarded-for", "forwarded", "x-real-ip", "x-forwarded-host", "x-forwarded-proto"]) {
      expect(isLocalDirect(attempt({ headers: { host: "localhost", [h]: "1.2.3.4" } })), h).toBe(false);
    }
  });

  it.each([
    "localhost:evil.com",
    "localhost:80@evil.com",
    "localhost.",
    "localhost:99999",
    "localhost:",
    "127.0.0.1.evil.com",
    "[::1].evil.com",
    "localhost evil.com",
    "localhost,evil.com",
  ])("refuses the Host trick %s", (host) => {
    expect(isLocalDirect(attempt({ headers: { host } }))).toBe(false);
  });

  it("lets an absolute-form request target decide the host", () => {
    const headers = { host: "localhost" };
    expect(isLocalDirect(attempt({ headers, target: "http://evil.com/api/tools/invoke" }))).toBe(false);
    expect(isLocalDirect(attempt({ headers, target: "http://user@localhost/api" }))).toBe(false);
    expect(isLocalDirect(attempt({ headers: { host: "evil.com" }, target: "http://localhost:18789/" }))).toBe(true);
  });

  it("never trusts a browser request as loopback", () => {
    for (const [name, value] of [
      ["origin", "https://evil.example"],
      ["origin", "null"],
      ["origin", "http://127.0.0.1:18789"],
      ["sec-fetch-site", "cross-site"],
    ] as const) {
      expect(isLocalDirect(attempt({ headers: { host: "127.0.0.1:18789", [name]: value } })), name).toBe(false);
    }
    // Node's fetch sends Sec-Fetch-Mode too, and local tools use it: that alone is no browser.
    expect(isLocalDirect(attempt({ headers: { host: "127.0.0.1:18789", "sec-fetch-mode": "cors" } }))).toBe(true);
  });

  it("parses hosts strictly: a name or address and an optional numeric port", () => {
    expect(parseHost("LocalHost:18789")).toBe("localhost");
    expect(parseHost("[::1]:80")).toBe("::1");
    expect(parseHost("::1")).toBe("::1");
    expect(parseHost("[::1")).toBeUndefined();
    expect(parseHost("[evil]:80")).toBeUndefined();
    expect(parseHost("a:b:c")).toBeUndefined();
    expect(parseHost("")).toBeUndefined();
  });

  it("authenticates a local client without credentials, unless loopback trust is off", async () => {
    expect(await authenticate(settings(), attempt())).toEqual({ ok: true, method: "loopback" });
    expect((await authenticate(settings({ allowLoopback: false }), attempt())).ok).toBe(false);
  });

  it("still checks a secret a local client presents", async () => {
    expect(await authenticate(settings(), attempt({ credential: "wrong" }))).toEqual({
      ok: false,
      reason: "wrong credentials",
    });
  });

  it("never takes a listed proxy for a local client, even with nothing forwarded", async () => {
    const viaProxy = settings({ trustedProxies: new TrustedProxies(["127.0.0.50"]) });
    expect((await authenticate(viaProxy, attempt({ peerIp: "127.0.0.50" }))).ok).toBe(false);
    expect(await authenticate(viaProxy, attempt({ peerIp: "127.0.0.51" }))).toEqual({ ok: true, method: "loopback" });
  });
});

/** A verifier that knows one device token, and counts how often it was asked. */
function devices(known: string) {
  const calls: string[] = [];
  return {
    calls,
    verify: async (token: string) => {
      calls.push(token);
      return token === known ? { deviceId: "kitchen", tokenId: "t1" } : null;
    },
  };
}

describe("credential chain", () => {
  const remote = { peerIp: "203.0.113.9", headers: { host: "gw.example.org" } };

  it("accepts the token, then the password, as bearer secrets", async () => {
    expect(await authenticate(settings(), attempt({ ...remote, credential: "tok-123456" }))).toEqual({
      ok: true,
      method: "token",
    });
    expect(await authenticate(settings(), attempt({ ...remote, credential: "pw-abcdef" }))).toEqual({
      ok: true,
      method: "password",
    });
  });

  it("rejects a wrong or missing secret from a remote client", async () => {
    expect((await authenticate(settings(), attempt({ ...remote, credential: "tok-12345" }))).ok).toBe(false);
    expect(await authenticate(settings(), attempt(remote))).toEqual({ ok: false, reason: "missing credentials" });
    expect(
      (await authenticate(settings({ token: undefined, password: undefined }), attempt({ ...remote, credential: "" }))).ok,
    ).toBe(false);
  });

  it("takes a device token for role node, second in the chain, and asks the store only for token-shaped secrets", async () => {
    const token = "gwd1.a2l0Y2hlbg.t1.secret";
    const verifier = devices(token);
    expect(await authenticate(settings(), attempt({ ...remote, credential: token, role: "node" }), verifier)).toEqual({
      ok: true,
      method: "device",
      device: { deviceId: "kitchen", tokenId: "t1" },
    });
    // From loopback too: a presented credential is always checked, and the device is who it names.
    expect(await authenticate(settings(), attempt({ credential: token, role: "node" }), verifier)).toMatchObject({ method: "device" });
    expect(await authenticate(settings(), attempt({ ...remote, credential: "tok-123456", role: "node" }), verifier)).toEqual({
      ok: true,
      method: "token",
    });
    expect(verifier.calls).toEqual([token, token]);
  });

  it("refuses a device token for any other role, and a guessed one, as wrong credentials", async () => {
    const token = "gwd1.a2l0Y2hlbg.t1.secret";
    const verifier = devices(token);
    expect(await authenticate(settings(), attempt({ ...remote, credential: token, role: "control" }), verifier)).toEqual({
      ok: false,
      reason: "a device token authenticates role node only",
    });
    expect(await authenticate(settings(), attempt({ ...remote, credential: `${token}x`, role: "node" }), verifier)).toEqual({
      ok: false,
      reason: "wrong credentials",
    });
    // HTTP requests name no role: a device token is no bearer secret.
    expect((await authenticate(settings(), attempt({ ...remote, credential: token }), verifier)).ok).toBe(false);
    expect(verifier.calls).toEqual([`${token}x`]);
  });

  it("believes a trusted proxy's identity header only from a trusted proxy", async () => {
    const s = settings({ trustedProxy: { enabled: true, header: "X-Forwarded-User" } });
    const headers = { host: "gw", "x-forwarded-user": "alice" };
    expect(await authenticate(s, attempt({ peerIp: "10.1.2.3", headers }))).toEqual({
      ok: true,
      method: "trusted-proxy",
      user: "alice",
    });
    expect((await authenticate(s, attempt({ peerIp: "203.0.113.9", headers }))).ok).toBe(false);
    // Not from a loopback peer either, unless it is listed: a local process is not a proxy.
    expect((await authenticate(s, attempt({ peerIp: "127.0.0.1", headers: { ...headers, host: "gw" } }))).ok).toBe(false);
    expect((await authenticate(settings(), attempt({ peerIp: "10.1.2.3", headers }))).ok).toBe(false);
    expect((await authenticate(s, attempt({ peerIp: "10.1.2.3", headers: { host: "gw", "x-forwarded-user": " " } }))).ok).toBe(false);
  });

  it("matches IPv6 proxies by address and range", async () => {
    const s = settings({
      trustedProxy: { enabled: true, header: "x-forwarded-user" },
      trustedProxies: new TrustedProxies(["fd00::/8", "2001:db8::7"]),
    });
    const headers = { host: "gw", "x-forwarded-user": "carol" };
    for (const peerIp of ["fd12:3456::1", "2001:db8::7"]) {
      expect(await authenticate(s, attempt({ peerIp, headers })), peerIp).toMatchObject({ ok: true, user: "carol" });
    }
    for (const peerIp of ["2001:db8::8", "fe80::1", "::1"]) {
      expect((await authenticate(s, attempt({ peerIp, headers }))).ok, peerIp).toBe(false);
    }
  });

  it("accepts overlay identities when enabled, and nothing else when required", async () => {
    const headers = { host: "gw", "overlay-user-login": "bob@example.org" };
    expect(await authenticate(settings({ overlayMode: "enabled" }), attempt({ peerIp: "10.0.0.5", headers }))).toEqual({
      ok: true,
      method: "overlay",
      user: "bob@example.org",
    });
    expect((await authenticate(settings(), attempt({ peerIp: "10.0.0.5", headers }))).ok).toBe(false);
    expect((await authenticate(settings({ overlayMode: "enabled" }), attempt({ peerIp: "127.0.0.1", headers }))).ok).toBe(false);
    const required = settings({ overlayMode: "require", trustedProxy: { enabled: true, header: "x-forwarded-user" } });
    const verifier = devices("gwd1.a2l0Y2hlbg.t1.secret");
    expect((await authenticate(required, attempt({ ...remote, credential: "tok-123456" }))).ok).toBe(false);
    expect((await authenticate(required, attempt({ ...remote, credential: "pw-abcdef" }))).ok).toBe(false);
    expect((await authenticate(required, attempt({ ...remote, credential: "gwd1.a2l0Y2hlbg.t1.secret", role: "node" }), verifier)).ok).toBe(false);
    expect((await authenticate(required, attempt())).ok).toBe(false);
    expect((await authenticate(required, attempt({ peerIp: "10.0.0.5", headers: { host: "gw", "x-forwarded-user": "eve" } }))).ok).toBe(false);
    expect((await authenticate(required, attempt({ peerIp: "203.0.113.9", headers }))).ok).toBe(false);
    expect(await authenticate(required, attempt({ peerIp: "10.0.0.5", headers }))).toMatchObject({ ok: true, method: "overlay" });
    expect(verifier.calls).toEqual([]);
  });
});

describe("client address behind proxies", () => {
  const proxies = new TrustedProxies(["10.0.0.0/8", "192.0.2.1"]);

  it("uses the socket peer unless it is a trusted proxy", () => {
    expect(proxies.clientIp("::ffff:198.51.100.7", { "x-forwarded-for": "1.1.1.1" })).toBe("198.51.100.7");
    expect(proxies.clientIp("10.0.0.1", { "x-forwarded-for": "1.1.1.1, 192.0.2.1" })).toBe("1.1.1.1");
    expect(proxies.clientIp("10.0.0.1", { "x-forwarded-for": "spoof, 8.8.8.8" })).toBe("8.8.8.8");
    expect(proxies.clientIp("10.0.0.1", {})).toBe("10.0.0.1");
  });

  it("reads IPv6 peers and chains, and IPv4-mapped peers as IPv4", () => {
    const mixed = new TrustedProxies(["10.0.0.0/8", "fd00::/8"]);
    expect(mixed.clientIp("::ffff:10.0.0.1", { "x-forwarded-for": "198.51.100.4" })).toBe("198.51.100.4");
    expect(mixed.clientIp("fd00::5", { "x-forwarded-for": "2001:db8::1, fd00::9" })).toBe("2001:db8::1");
    expect(mixed.clientIp("2001:db8::2", { "x-forwarded-for": "127.0.0.1" })).toBe("2001:db8::2");
    expect(mixed.has("fe80::1")).toBe(false);
  });
});
