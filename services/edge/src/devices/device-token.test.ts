import { describe, expect, it } from "vitest";
import { looksLikeDeviceToken, mintDeviceToken, parseDeviceToken, tokenHash, tokenMatches } from "./device-token.js";

describe("device tokens", () => {
  it("name their device and token id, and differ every time", () => {
    const a = mintDeviceToken("kitchen.speaker:1");
    const b = mintDeviceToken("kitchen.speaker:1");
    expect(a.token).not.toBe(b.token);
    expect(a.tokenId).not.toBe(b.tokenId);
    expect(looksLikeDeviceToken(a.token)).toBe(true);
    expect(parseDeviceToken(a.token)).toEqual({ deviceId: "kitchen.speaker:1", tokenId: a.tokenId });
    expect(a.hash).toBe(tokenHash(a.token));
    expect(a.token.length).toBeGreaterThan(60);
  });

  it("match only their own hash", () => {
    const { token, hash } = mintDeviceToken("d1");
    expect(tokenMatches(token, hash)).toBe(true);
    expect(tokenMatches(`${token}x`, hash)).toBe(false);
    expect(tokenMatches(token, "00")).toBe(false);
  });

  it("refuse anything that is not exactly their shape", () => {
    const { token } = mintDeviceToken("d1");
    const [prefix, id, tokenId, secret] = token.split(".");
    for (const bad of [
      "",
      "gwd1",
      `${prefix}.${id}.${tokenId}`,
      `${prefix}.${id}.${tokenId}.${secret}.extra`,
      `gwd2.${id}.${tokenId}.${secret}`,
      `${prefix}.${id}=.${tokenId}.${secret}`,
      `${prefix}..${tokenId}.${secret}`,
      `${prefix}.${id}.${tokenId}.se cret`,
    ]) {
      expect(parseDeviceToken(bad), bad).toBeUndefined();
    }
    expect(looksLikeDeviceToken("e2e-token-0123456789abcdef")).toBe(false);
  });
});
