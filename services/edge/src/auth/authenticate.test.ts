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

  it("authenticates a local client without credentials, unless loopback trust is off", () => {
    expect(authenticate(settings(), attempt())).toEqual({ ok: true, method: "loopback" });
    expect(authenticate(settings({ allowLoopback: false }), attempt()).ok).toBe(false);
  });

  it("still checks a secret a local client presents", () => {
    expect(authenticate(settings(), attempt({ credential: "wrong" }))).toEqual({
      ok: false,
      reason: "wrong credentials",
    });
  });
});

describe("credential chain", () => {
  const remote = { peerIp: "203.0.113.9", headers: { host: "gw.example.org" } };

  it("accepts the token, then the password, as bearer secrets", () => {
    expect(authenticate(settings(), attempt({ ...remote, credential: "tok-123456" }))).toEqual({
      ok: true,
      method: "token",
    });
    expect(authenticate(settings(), attempt({ ...remote, credential: "pw-abcdef" }))).toEqual({
      ok: true,
      method: "password",
    });
  });

  it("rejects a wrong or missing secret from a remote client", () => {
    expect(authenticate(settings(), attempt({ ...remote, credential: "tok-12345" })).ok).toBe(false);
    expect(authenticate(settings(), attempt(remote))).toEqual({ ok: false, reason: "missing credentials" });
    expect(
      authenticate(
        settings({ token: undefined, password: undefined }),
        attempt({ ...remote, credential: "" }),
      ).ok,
    ).toBe(false);
  });

  it("believes a trusted proxy's identity header only from a trusted proxy", () => {
    const s = settings({ trustedProxy: { enabled: true, header: "X-Forwarded-User" } });
    const headers = { host: "gw", "x-forwarded-user": "alice" };
    expect(authenticate(s, attempt({ peerIp: "10.1.2.3", headers }))).toEqual({
      ok: true,
      method: "trusted-proxy",
      user: "alice",
    });
    expect(authenticate(s, attempt({ peerIp: "203.0.113.9", headers })).ok).toBe(false);
    expect(authenticate(settings(), attempt({ peerIp: "10.1.2.3", headers })).ok).toBe(false);
  });

  it("accepts overlay identities when enabled, and nothing else when required", () => {
    const headers = { host: "gw", "overlay-user-login": "bob@example.org" };
    expect(
      authenticate(settings({ overlayMode: "enabled" }), attempt({ peerIp: "10.0.0.5", headers })),
    ).toEqual({
      ok: true,
      method: "overlay",
      user: "bob@example.org",
    });
    expect(authenticate(settings(), attempt({ peerIp: "10.0.0.5", headers })).ok).toBe(false);
    const required = settings({ overlayMode: "require" });
    expect(authenticate(required, attempt({ ...remote, credential: "tok-123456" })).ok).toBe(false);
    expect(authenticate(required, attempt()).ok).toBe(false);
    expect(authenticate(required, attempt({ peerIp: "203.0.113.9", headers })).ok).toBe(false);
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
});
