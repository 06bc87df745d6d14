import { createHash, createPublicKey, type KeyObject, verify } from "node:crypto";
import { GatewayError } from "@gw/contracts";

/**
 * Signed device identity: a device may pair with an Ed25519 key. It proves it holds the private
 * key by signing the pairing challenge, which names the socket it asks on (its `connId`, random
 * and fresh per connection, so a captured signature is worth nothing on another socket). The
 * approver sees the key's fingerprint, to compare with what the device displays.
 */

// DER SubjectPublicKeyInfo header of an Ed25519 key (RFC 8410); the 32 raw key bytes follow.
const ED25519_SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

export function pairingChallenge(connId: string, deviceId: string): Buffer {
  return Buffer.from(`agent-gateway pair v1\n${connId}\n${deviceId}`, "utf8");
}

/** Accepts base64url or base64 (both decode the same in Node), padded or not. */
function decode(text: string): Buffer {
  return Buffer.from(text.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, ""), "base64url");
}

function publicKey(raw: Buffer): KeyObject {
  if (raw.length !== 32) throw new GatewayError("INVALID_REQUEST", "params.publicKey: must be 32 bytes (Ed25519)");
  try {
    return createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, raw]), format: "der", type: "spki" });
  } catch (cause) {
    throw new GatewayError("INVALID_REQUEST", "params.publicKey: not an Ed25519 public key", { cause });
  }
}

/** The key's fingerprint: the first 16 bytes of its SHA-256, hex. */
export function keyFingerprint(publicKeyText: string): string {
  return createHash("sha256").update(decode(publicKeyText)).digest("hex").slice(0, 32);
}

/** The key in one canonical spelling (unpadded base64url), for storage and comparison. */
export function canonicalKey(publicKeyText: string): string {
  return decode(publicKeyText).toString("base64url");
}

/** Throws INVALID_REQUEST unless `signature` is the key's signature of the pairing challenge. */
export function assertSignedChallenge(
  input: { publicKey: string; signature: string },
  connId: string,
  deviceId: string,
): void {
  const key = publicKey(decode(input.publicKey));
  const signature = decode(input.signature);
  if (signature.length !== 64 || !verify(null, pairingChallenge(connId, deviceId), key, signature)) {
    throw new GatewayError(
      "INVALID_REQUEST",
      'params.signature: does not verify; sign "agent-gateway pair v1\\n<connId>\\n<deviceId>" with the device key, connId from the connect answer',
    );
  }
}
