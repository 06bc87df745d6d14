import { isGatewayError } from "@gw/contracts";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { expectGatewayError, uniqueName } from "./contract-helpers.js";
import type { DurableKv, DurableStore } from "./durable-store.js";

export interface DurableStoreSubject {
  store: DurableStore;
  /** Closes `store`, restarts whatever backs it (process, server) and opens it again. */
  reopen(): Promise<DurableStore>;
  /** Closes whatever the subject opened (the latest store, connections). */
  dispose(): Promise<void>;
}

const text = (s: string) => new TextEncoder().encode(s);
const str = (b: Uint8Array | undefined) => (b === undefined ? undefined : new TextDecoder().decode(b));

/** Keys real callers use: session keys, addresses, paths, and what breaks naive encodings. */
export const AWKWARD_KEYS = [
  "agent:main:telegram:direct",
  "user@example.com",
  "+15551234567",
  "#general",
  "path/to/thing",
  "with space",
  "ünïcödé",
  "emoji 🎉 key",
  ".leading-dot",
  "trailing-dot.",
  "a..b",
  "*",
  ">",
  "=3A",
  "tab\tand\nnewline",
  "k".repeat(300),
  "ключ:中文:😀".repeat(20),
];

/** The behaviour every DurableStore must show; `open` gives a store over empty buckets. */
export function describeDurableKvContract(name: string, open: () => Promise<DurableStoreSubject>): void {
  describe(`DurableStore contract: ${name}`, () => {
    let subject: DurableStoreSubject;
    let kv: DurableKv;
    beforeEach(async () => {
      subject = await open();
      kv = await subject.store.kv(uniqueName("b"));
    });
    afterEach(async () => {
      await subject.dispose();
    });

    it("puts, gets and bumps the revision on every write", async () => {
      expect(await kv.get("missing")).toBeNull();
      const r1 = await kv.put("k", text("one"));
      const got = await kv.get("k");
      expect(str(got?.value)).toBe("one");
      expect(got?.revision).toBe(r1);
      const r2 = await kv.put("k", text("two"));
      expect(r2).toBeGreaterThan(r1);
      expect(await kv.get("k")).toEqual({ value: text("two"), revision: r2 });
    });

    it("round-trips binary and empty values", async () => {
      const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
      await kv.put("bin", bytes);
      await kv.put("empty", new Uint8Array());
      expect((await kv.get("bin"))?.value).toEqual(bytes);
      expect((await kv.get("empty"))?.value).toEqual(new Uint8Array());
    });

    it("create() writes a new key once and then reports CONFLICT", async () => {
      const rev = await kv.create("session", text("v1"));
      expect((await kv.get("session"))?.revision).toBe(rev);
      await expectGatewayError(kv.create("session", text("v2")), "CONFLICT");
      expect(str((await kv.get("session"))?.value)).toBe("v1");
    });

    it("lets exactly one of many concurrent create() calls win", async () => {
      const outcomes = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) => kv.create("race", text(`${i}`))),
      );
      expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
      for (const o of outcomes) {
        if (o.status === "rejected") expect(isGatewayError(o.reason) && o.reason.code).toBe("CONFLICT");
      }
    });

    it("update() is a compare-and-set on the revision", async () => {
      const r1 = await kv.put("doc", text("a"));
      const r2 = await kv.update("doc", text("b"), r1);
      expect(r2).toBeGreaterThan(r1);
      await expectGatewayError(kv.update("doc", text("stale"), r1), "CONFLICT");
      expect(await kv.get("doc")).toEqual({ value: text("b"), revision: r2 });
      await expectGatewayError(kv.update("never-written", text("x"), r2), "CONFLICT");
      await expectGatewayError(kv.update("doc", text("x"), 0), "INVALID_REQUEST");
    });

    it("lets exactly one of many concurrent update() calls on one revision win", async () => {
      const rev = await kv.put("counter", text("0"));
      const outcomes = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) => kv.update("counter", text(`${i}`), rev)),
      );
      expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
    });

    it("delete() removes a key, and create() works again afterwards", async () => {
      await kv.put("gone", text("x"));
      await kv.delete("gone");
      await kv.delete("gone");
      await kv.delete("never-existed");
      expect(await kv.get("gone")).toBeNull();
      expect(await kv.keys()).toEqual([]);
      await kv.create("gone", text("back"));
      expect(str((await kv.get("gone"))?.value)).toBe("back");
    });

    it("delete() with a revision removes only that revision of the key", async () => {
      const first = await kv.put("queue", text("one"));
      const second = await kv.update("queue", text("two"), first);
      await expectGatewayError(kv.delete("queue", first), "CONFLICT");
      expect(str((await kv.get("queue"))?.value)).toBe("two");
      await kv.delete("queue", second);
      expect(await kv.get("queue")).toBeNull();
      await expectGatewayError(kv.delete("queue", second), "CONFLICT");
      await expectGatewayError(kv.delete("never-existed", 1), "CONFLICT");
      const again = await kv.create("queue", text("three"));
      await kv.delete("queue", again);
      expect(await kv.keys()).toEqual([]);
    });

    it("keeps awkward keys intact through put, get and keys()", async () => {
      for (const [i, key] of AWKWARD_KEYS.entries()) await kv.put(key, text(`value ${i}`));
      expect(await kv.keys()).toEqual([...AWKWARD_KEYS].sort());
      for (const [i, key] of AWKWARD_KEYS.entries())
        expect(str((await kv.get(key))?.value)).toBe(`value ${i}`);
      await expectGatewayError(kv.create(AWKWARD_KEYS[0] ?? "", text("dup")), "CONFLICT");
    });

    it("rejects an empty key and bad bucket names", async () => {
      await expectGatewayError(kv.put("", text("x")), "INVALID_REQUEST");
      await expectGatewayError(kv.get(""), "INVALID_REQUEST");
      await expectGatewayError(subject.store.kv("bad name"), "INVALID_REQUEST");
      await expectGatewayError(subject.store.kv("a.b"), "INVALID_REQUEST");
    });

    it("keeps buckets apart", async () => {
      const other = await subject.store.kv(uniqueName("b"));
      await kv.put("same", text("here"));
      expect(await other.get("same")).toBeNull();
      expect(await other.keys()).toEqual([]);
    });

    it("keeps data and revisions across a restart, and never reuses a revision", async () => {
      const bucket = uniqueName("persist");
      const before = await subject.store.kv(bucket);
      const rA = await before.put("a:1", text("alpha"));
      const rB = await before.create("b@2", text("beta"));
      const rC = await before.put("c 3", text("gamma"));
      await before.delete("c 3");

      const reopened = await subject.reopen();
      const after = await reopened.kv(bucket);
      expect(await after.keys()).toEqual(["a:1", "b@2"]);
      expect(await after.get("a:1")).toEqual({ value: text("alpha"), revision: rA });
      expect(await after.get("b@2")).toEqual({ value: text("beta"), revision: rB });
      expect(await after.get("c 3")).toBeNull();
      const rD = await after.put("d", text("delta"));
      expect(rD).toBeGreaterThan(Math.max(rA, rB, rC));
      expect(await after.update("a:1", text("alpha2"), rA)).toBeGreaterThan(rD);
    });

    it("is healthy until closed, and refuses work afterwards", async () => {
      expect(subject.store.isHealthy()).toBe(true);
      await subject.store.close();
      expect(subject.store.isHealthy()).toBe(false);
      await expectGatewayError(kv.get("k"), "UNAVAILABLE");
      await expectGatewayError(subject.store.kv("other"), "UNAVAILABLE");
    });
  });
}
