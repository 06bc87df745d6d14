import { generateKeyPairSync, sign } from "node:crypto";
import { describe, expect, it } from "vitest";
import { assertSignedChallenge, canonicalKey, keyFingerprint, pairingChallenge } from "./device-key.js";

function deviceKey() {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const raw = publicKey.export({ format: "der", type: "spki" }).subarray(-32);
  return { publicKey: raw.toString("base64url"), privateKey };
}

describe("signed device identity", () => {
  it("accepts the device key's signature of this socket's challenge, in base64url or base64", () => {
    const key = deviceKey();
    const signature = sign(null, pairingChallenge("conn-1", "dev-1"), key.privateKey);
    expect(() => assertSignedChallenge({ publicKey: key.publicKey, signature: signature.toString("base64url") }, "conn-1", "dev-1")).not.toThrow();
    const b64 = Buffer.from(key.publicKey, "base64url").toString("base64");
    expect(() => assertSignedChallenge({ publicKey: b64, signature: signature.toString("base64") }, "conn-1", "dev-1")).not.toThrow();
    expect(canonicalKey(b64)).toBe(key.publicKey);
    expect(keyFingerprint(b64)).toBe(keyFingerprint(key.publicKey));
    expect(keyFingerprint(key.publicKey)).toMatch(/^[0-9a-f]{32}$/);
  });

  it("refuses a signature of another socket, another device or by another key", () => {
    const key = deviceKey();
    const other = deviceKey();
    const signed = (conn: string, dev: string, by = key.privateKey) => sign(null, pairingChallenge(conn, dev), by).toString("base64url");
    for (const signature of [signed("conn-2", "dev-1"), signed("conn-1", "dev-2"), signed("conn-1", "dev-1", other.privateKey)]) {
      expect(() => assertSignedChallenge({ publicKey: key.publicKey, signature }, "conn-1", "dev-1")).toThrow(/does not verify/);
    }
  });

  it("refuses a key that is not 32 bytes", () => {
    expect(() => assertSignedChallenge({ publicKey: Buffer.alloc(31).toString("base64url"), signature: "x" }, "c", "d")).toThrow(/32 bytes/);
  });
});
