import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFileDurableStore, type DurableStore } from "@gw/store";
import { afterEach, describe, expect, it } from "vitest";
import { CURSOR_BUCKET, FencedOut, ReceiverCursors } from "./receiver-cursors.js";

let store: DurableStore | undefined;
afterEach(async () => {
  await store?.close();
});

async function open(): Promise<ReceiverCursors> {
  store = await createFileDurableStore(mkdtempSync(join(tmpdir(), "cursors-")));
  return ReceiverCursors.open(store);
}

describe("ReceiverCursors", () => {
  it("raises the fence on every takeover and hands the stored cursor to the next tenure", async () => {
    const cursors = await open();
    const first = await cursors.takeOver("tg", "a");
    expect(first).toEqual({ fence: 1, cursor: undefined });
    await cursors.advance("tg", 1, "101");
    await cursors.advance("tg", 1, "105");
    const second = await cursors.takeOver("tg", "b");
    expect(second).toEqual({ fence: 2, cursor: "105" });
    expect(await cursors.read("tg")).toMatchObject({ fence: 2, holder: "b", cursor: "105" });
  });

  it("refuses the cursor of a tenure that was taken over, and keeps the new tenure's", async () => {
    const cursors = await open();
    await cursors.takeOver("tg", "a");
    await cursors.advance("tg", 1, "10");
    await cursors.takeOver("tg", "b");
    await expect(cursors.advance("tg", 1, "3")).rejects.toBeInstanceOf(FencedOut);
    await cursors.advance("tg", 2, "12");
    await expect(cursors.advance("tg", 1, "99")).rejects.toBeInstanceOf(FencedOut);
    expect((await cursors.read("tg"))?.cursor).toBe("12");
  });

  it("never lets a stale write land while a takeover races it", async () => {
    const cursors = await open();
    await cursors.takeOver("tg", "a");
    // The old tenure stores batch after batch (each after a store of its messages) while a new one takes over.
    const old = (async () => {
      for (let i = 0; ; i++) {
        await cursors.advance("tg", 1, `old-${i}`);
        await new Promise((r) => setTimeout(r, 1));
      }
    })().catch((err: unknown) => err);
    await new Promise((r) => setTimeout(r, 5));
    const taken = await cursors.takeOver("tg", "b");
    expect(await old).toBeInstanceOf(FencedOut);
    await cursors.advance("tg", taken.fence, "new");
    expect((await cursors.read("tg"))?.cursor).toBe("new");
  });

  it("refuses to move the cursor of an account nobody took over", async () => {
    const cursors = await open();
    await expect(cursors.advance("nobody", 1, "1")).rejects.toBeInstanceOf(FencedOut);
  });

  it("replaces a record it cannot read at the next takeover, fencing its writer out", async () => {
    const cursors = await open();
    const kv = await store!.kv(CURSOR_BUCKET);
    await kv.put("tg", Buffer.from("not json"));
    expect(await cursors.takeOver("tg", "a")).toEqual({ fence: 1, cursor: undefined });
  });
});
