import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * Device tokens: `gwd1.<deviceId, base64url>.<tokenId>.<secret>`. The device id in the token
 * finds the device's record in one read; the token id tells the token apart from the device's
 * earlier ones (sockets remember it, rotation names the new one); the secret is 256 random bits.
 * Only the SHA-256 of the whole token is stored: with 256 bits of entropy nothing slower is
 * needed to make a stolen store useless (docs/decisions.md, Authentication).
 */
const PREFIX = "gwd1";
const PART = /^[A-Za-z0-9_-]+$/;

export interface MintedToken {
  token: string;
  tokenId: string;
  /** Hex SHA-256 of the token: what the store keeps. */
  hash: string;
}

export interface ParsedToken {
  deviceId: string;
  tokenId: string;
}

export function tokenHash(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

export function mintDeviceToken(deviceId: string): MintedToken {
  const tokenId = randomBytes(9).toString("base64url");
  const secret = randomBytes(32).toString("base64url");
  const token = `${PREFIX}.${Buffer.from(deviceId, "utf8").toString("base64url")}.${tokenId}.${secret}`;
  return { token, tokenId, hash: tokenHash(token) };
}

/** Cheap shape test, so credentials that cannot be device tokens cost no store read. */
export function looksLikeDeviceToken(credential: string): boolean {
  return credential.startsWith(`${PREFIX}.`);
}

export function parseDeviceToken(token: string): ParsedToken | undefined {
  const parts = token.split(".");
  if (parts.length !== 4 || parts[0] !== PREFIX) return undefined;
  const [, encodedId, tokenId, secret] = parts as [string, string, string, string];
  if (!PART.test(encodedId) || !PART.test(tokenId) || !PART.test(secret)) return undefined;
  const deviceId = Buffer.from(encodedId, "base64url").toString("utf8");
  // Round-trip: a spelling that is not the canonical base64url of some id names no device.
  if (deviceId.length === 0 || Buffer.from(deviceId, "utf8").toString("base64url") !== encodedId) return undefined;
  return { deviceId, tokenId };
}

/** Constant time over the hashes, which are of equal length whatever the token was. */
export function tokenMatches(token: string, storedHash: string): boolean {
  const presented = Buffer.from(tokenHash(token), "hex");
  const stored = Buffer.from(storedHash, "hex");
  return stored.length === presented.length && timingSafeEqual(presented, stored);
}
