import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFileDurableStore, type DurableStore } from "@gw/store";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DeviceRegistry } from "./device-registry.js";
import { mintDeviceToken } from "./device-token.js";

const device = (deviceId: string) => ({ deviceId, name: `Device ${deviceId}`, pairedAt: 1_000, pairedFrom: "127.0.0.9" });

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

describe("the device registry", () => {
  let dir: string;
  let store: DurableStore;
  let registry: DeviceRegistry;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "gw-devices-"));
    store = await createFileDurableStore(dir);
    registry = new DeviceRegistry(await store.kv("devices"));
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("pairs a device once and verifies its token, storing only the token's hash", async () => {
    const { token, record } = await registry.pair(device("d1"));
    expect(await registry.verify(token)).toEqual({ deviceId: "d1", tokenId: record.tokenId });
    await expect(registry.pair(device("d1"))).rejects.toMatchObject({ code: "CONFLICT" });
    const stored = filesUnder(dir).map((file) => readFileSync(file, "utf8")).join("\n");
    expect(stored).toContain(record.tokenHash);
    expect(stored).not.toContain(token.split(".")[3]);
  });

  it("refuses tokens that are not the device's current one", async () => {
    const { token } = await registry.pair(device("d2"));
    expect(await registry.verify(`${token.slice(0, -1)}${token.endsWith("A") ? "B" : "A"}`)).toBeNull();
    expect(await registry.verify(mintDeviceToken("d2").token)).toBeNull();
    expect(await registry.verify(mintDeviceToken("nobody").token)).toBeNull();
    expect(await registry.verify("gwd1.garbage")).toBeNull();
  });

  it("rotates: the new token works, the old one stops at once", async () => {
    const first = await registry.pair(device("d3"));
    const second = await registry.rotate("d3", 5_000);
    expect(second.record.rotatedAt).toBe(5_000);
    expect(second.record.pairedAt).toBe(1_000);
    expect(await registry.verify(first.token)).toBeNull();
    expect(await registry.verify(second.token)).toMatchObject({ deviceId: "d3" });
    await expect(registry.rotate("nobody")).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("revokes, lists without secrets, and undoes only an unchanged pairing", async () => {
    const a = await registry.pair(device("a"));
    await registry.pair({ ...device("b"), publicKey: "k", keyFingerprint: "f" });
    expect(await registry.list()).toEqual([
      { deviceId: "a", name: "Device a", pairedAt: 1_000, rotatedAt: 1_000, pairedFrom: "127.0.0.9" },
      { deviceId: "b", name: "Device b", keyFingerprint: "f", pairedAt: 1_000, rotatedAt: 1_000, pairedFrom: "127.0.0.9" },
    ]);
    await registry.unpair("a", "not-its-token");
    expect(await registry.verify(a.token)).not.toBeNull();
    await registry.unpair("a", a.record.tokenId);
    expect(await registry.verify(a.token)).toBeNull();
    await registry.revoke("b");
    expect(await registry.list()).toEqual([]);
    await expect(registry.revoke("b")).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
