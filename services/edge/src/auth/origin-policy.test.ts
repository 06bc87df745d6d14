import { describe, expect, it } from "vitest";
import { OriginPolicy } from "./origin-policy.js";

function verdict(policy: OriginPolicy, origin: string | undefined, authority = "127.0.0.1:18789"): string {
  try {
    policy.check(origin === undefined ? {} : { origin }, authority);
    return "allowed";
  } catch (err) {
    return (err as { code?: string }).code ?? "threw";
  }
}

describe("OriginPolicy", () => {
  const policy = new OriginPolicy(["https://app.example.org", "http://localhost:5173"]);

  it("has nothing to say about requests without Origin", () => {
    expect(verdict(policy, undefined)).toBe("allowed");
  });

  it("allows listed origins, in the spelling browsers send", () => {
    expect(verdict(policy, "https://app.example.org")).toBe("allowed");
    expect(verdict(policy, "http://localhost:5173")).toBe("allowed");
    expect(verdict(policy, "HTTPS://APP.example.org")).toBe("allowed");
  });

  it("allows the edge's own page: the origin's host and port are where the request went", () => {
    expect(verdict(policy, "http://127.0.0.1:18789")).toBe("allowed");
    expect(verdict(policy, "https://gw.example.org", "gw.example.org")).toBe("allowed");
    expect(verdict(policy, "http://localhost:18789", "localhost:18789")).toBe("allowed");
  });

  it("refuses every other page, null and junk", () => {
    expect(verdict(policy, "https://evil.example")).toBe("FORBIDDEN");
    expect(verdict(policy, "null")).toBe("FORBIDDEN");
    expect(verdict(policy, "")).toBe("FORBIDDEN");
    expect(verdict(policy, "http://127.0.0.1:18790")).toBe("FORBIDDEN");
    expect(() => policy.check({ origin: "http://127.0.0.1:18789" }, undefined)).toThrow(/not allowed/);
    expect(verdict(policy, "file:///etc/passwd", "")).toBe("FORBIDDEN");
    expect(verdict(policy, "https://app.example.org.evil.example")).toBe("FORBIDDEN");
    expect(verdict(policy, "chrome-extension://abc")).toBe("FORBIDDEN");
  });
});
