import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { AWKWARD_KEYS } from "./durable-kv.contract.js";
import { decodeNatsKey, encodeNatsKey, fileNameForKey, keyFromFileName } from "./key-codec.js";

const sha = (s: string) => createHash("sha256").update(s).digest("hex");
const NATS_KEY = /^[-/_=.a-zA-Z0-9]+$/;

describe("JetStream key encoding", () => {
  it("produces valid KV keys that decode back", () => {
    for (const key of AWKWARD_KEYS) {
      const encoded = encodeNatsKey(key);
      expect(encoded).toMatch(NATS_KEY);
      expect(encoded.startsWith(".") || encoded.endsWith(".")).toBe(false);
      expect(decodeNatsKey(encoded)).toBe(key);
    }
  });

  it("keeps safe characters readable and escapes the rest as =HH UTF-8 bytes", () => {
    expect(encodeNatsKey("agent:main/x_y-z")).toBe("agent=3Amain/x_y-z");
    expect(encodeNatsKey("a.b=c")).toBe("a=2Eb=3Dc");
    expect(encodeNatsKey("é")).toBe("=C3=A9");
  });

  it("refuses keys it did not write", () => {
    expect(decodeNatsKey("bad=ZZ")).toBeUndefined();
    expect(decodeNatsKey("a.b")).toBeUndefined();
    expect(decodeNatsKey("=FF")).toBeUndefined();
  });
});

describe("file name encoding", () => {
  it("uses base64url names that decode back, and hashes names that would be too long", () => {
    for (const key of AWKWARD_KEYS) {
      const name = fileNameForKey(key, sha);
      expect(name).toMatch(/^[~A-Za-z0-9_-]+$/);
      expect(name.length).toBeLessThanOrEqual(200);
      if (name.startsWith("~")) expect(keyFromFileName(name)).toBeUndefined();
      else expect(keyFromFileName(name)).toBe(key);
    }
    expect(fileNameForKey("k".repeat(300), sha)).toBe(`~${sha("k".repeat(300))}`);
  });

  it("ignores temp files and foreign names", () => {
    expect(keyFromFileName(".seq")).toBeUndefined();
    expect(keyFromFileName("not base64!")).toBeUndefined();
  });
});
