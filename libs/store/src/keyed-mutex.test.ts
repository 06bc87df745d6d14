import { describe, expect, it } from "vitest";
import { KeyedMutex } from "./keyed-mutex.js";

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

describe("KeyedMutex", () => {
  it("runs work for one key strictly one at a time, in order", async () => {
    const mutex = new KeyedMutex();
    const log: string[] = [];
    await Promise.all(
      [1, 2, 3].map((n) =>
        mutex.run("k", async () => {
          log.push(`start ${n}`);
          await tick();
          log.push(`end ${n}`);
        }),
      ),
    );
    expect(log).toEqual(["start 1", "end 1", "start 2", "end 2", "start 3", "end 3"]);
    expect(mutex.size).toBe(0);
  });

  it("lets different keys overlap and survives failing work", async () => {
    const mutex = new KeyedMutex();
    let running = 0;
    let peak = 0;
    const work = async () => {
      running++;
      peak = Math.max(peak, running);
      await tick();
      running--;
    };
    await Promise.all([mutex.run("a", work), mutex.run("b", work)]);
    expect(peak).toBe(2);
    await expect(mutex.run("a", async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(await mutex.run("a", async () => "still works")).toBe("still works");
    expect(mutex.size).toBe(0);
  });
});
