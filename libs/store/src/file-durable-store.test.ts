import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { describeDurableKvContract } from "./durable-kv.contract.js";
import type { DurableStore } from "./durable-store.js";
import { createFileDurableStore } from "./file-durable-store.js";

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function freshDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "gw-file-store-"));
  dirs.push(dir);
  return dir;
}

describeDurableKvContract("files", async () => {
  const dir = await freshDir();
  let store: DurableStore = await createFileDurableStore(dir);
  return {
    get store() {
      return store;
    },
    async reopen() {
      await store.close();
      store = await createFileDurableStore(dir);
      return store;
    },
    dispose: () => store.close(),
  };
});

describe("file DurableStore on disk", () => {
  it("keeps one file per key under <dir>/<bucket>/ and no temp files", async () => {
    const dir = await freshDir();
    const store = await createFileDurableStore(dir);
    const kv = await store.kv("sessions");
    await Promise.all(Array.from({ length: 20 }, (_, i) => kv.put(`key ${i % 5}`, new Uint8Array([i]))));
    const files = await readdir(join(dir, "sessions"));
    expect(files.filter((f) => !f.startsWith("."))).toHaveLength(5);
    expect(files.filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("ignores and removes temp files a crash left behind", async () => {
    const dir = await freshDir();
    const first = await createFileDurableStore(dir);
    await (await first.kv("b")).put("k", new TextEncoder().encode("committed"));
    await first.close();
    // What a crash between write and rename leaves: a half-written temp file.
    await writeFile(join(dir, "b", ".aw.deadbeef.tmp"), '{"rev":99,"ke');

    const second = await createFileDurableStore(dir);
    const kv = await second.kv("b");
    expect(await kv.keys()).toEqual(["k"]);
    expect(new TextDecoder().decode((await kv.get("k"))?.value)).toBe("committed");
    expect(await readdir(join(dir, "b"))).toEqual(["aw"]);
  });
});
