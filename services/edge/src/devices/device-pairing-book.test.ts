import { createMemoryFastStore } from "@gw/store";
import { afterEach, describe, expect, it } from "vitest";
import { type NewPairing, PairingBook } from "./device-pairing-book.js";

let clock = 1_000_000;
const store = createMemoryFastStore({ now: () => clock });
afterEach(() => {
  clock += 10_000_000;
});

const request = (deviceId: string, clientIp = "198.51.100.1"): NewPairing => ({
  deviceId,
  name: deviceId,
  clientIp,
  edgeId: "e1",
  connId: `conn-${deviceId}`,
});

describe("the pairing book", () => {
  it("opens, lists, claims once and closes a request", async () => {
    const book = new PairingBook(store, { ttlMs: 60_000, maxPerIp: 3, maxTotal: 10 });
    const now = Date.now();
    const pending = await book.open(request("d1"), now);
    expect(pending).toMatchObject({ deviceId: "d1", requestedAt: now, expiresAt: now + 60_000, edgeId: "e1" });
    // A command-line argument as it is: never a leading "-" the CLI would read as an option.
    expect(pending.requestId).toMatch(/^[0-9a-f]{24}$/);
    expect((await book.list()).map((p) => p.requestId)).toEqual([pending.requestId]);
    await expect(book.open(request("d1", "198.51.100.2"))).rejects.toMatchObject({ code: "CONFLICT" });
    expect(await book.claim(pending.requestId)).toEqual(pending);
    await expect(book.claim(pending.requestId)).rejects.toMatchObject({ code: "CONFLICT" });
    await book.close(pending);
    expect(await book.list()).toEqual([]);
    await expect(book.claim(pending.requestId)).rejects.toMatchObject({ code: "NOT_FOUND" });
    // The device may ask again once its request is gone.
    await book.open(request("d1"));
  });

  it("gives a released claim back", async () => {
    const book = new PairingBook(store, { ttlMs: 60_000, maxPerIp: 3, maxTotal: 10 });
    const pending = await book.open(request("r1"));
    await book.claim(pending.requestId);
    await book.release(pending.requestId);
    expect(await book.claim(pending.requestId)).toEqual(pending);
  });

  it("limits pending requests per client IP and in all, and frees the slot of a refused one", async () => {
    const book = new PairingBook(store, { ttlMs: 60_000, maxPerIp: 2, maxTotal: 3 });
    await book.open(request("p1", "203.0.113.1"));
    await book.open(request("p2", "203.0.113.1"));
    await expect(book.open(request("p3", "203.0.113.1"))).rejects.toMatchObject({
      code: "RATE_LIMITED",
      details: { limit: "pairing.maxPendingPerIp", max: 2 },
    });
    await book.open(request("p3", "203.0.113.2"));
    await expect(book.open(request("p4", "203.0.113.3"))).rejects.toMatchObject({
      code: "RATE_LIMITED",
      details: { limit: "pairing.maxPending", max: 3 },
    });
    // The refused devices hold nothing: they may ask again once there is room.
    expect((await book.list()).map((p) => p.deviceId).sort()).toEqual(["p1", "p2", "p3"]);
  });

  it("stops listing, counting and resolving a request at its expiry, but lets its edge end it", async () => {
    const book = new PairingBook(store, { ttlMs: 60_000, maxPerIp: 1, maxTotal: 10 });
    const old = await book.open(request("t1", "192.0.2.7"), clock);
    clock += 60_001;
    expect(await book.list(clock)).toEqual([]);
    await expect(book.claim(old.requestId, { now: clock })).rejects.toMatchObject({ code: "NOT_FOUND" });
    // Another device from that address is not held back by the expired one.
    await book.open(request("t2", "192.0.2.7"), clock);
    // The edge holding the socket ends it (its timer fires at the expiry) and frees the device id.
    expect(await book.claim(old.requestId, { ending: true })).toEqual(old);
    await book.close(old);
    expect(await book.get(old.requestId)).toBeNull();
  });

  it("forgets a request whose edge never ended it, 30 s after its expiry", async () => {
    const book = new PairingBook(store, { ttlMs: 60_000, maxPerIp: 1, maxTotal: 10 });
    const orphan = await book.open(request("o1", "192.0.2.8"), clock);
    clock += 60_000 + 29_000;
    expect(await book.get(orphan.requestId)).not.toBeNull();
    clock += 1_001;
    expect(await book.get(orphan.requestId)).toBeNull();
    await expect(book.claim(orphan.requestId, { ending: true })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await book.open(request("o1", "192.0.2.8"), clock);
  });
});
