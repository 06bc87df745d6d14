import { describe, expect, it } from "vitest";
import { createRacing } from "./jetstream-create.js";

const named = (name: string, message = name) => Object.assign(new Error(message), { name });

describe("createRacing", () => {
  it("tries again a create nobody answered in time, or that raced another replica's", async () => {
    const failures = [named("TimeoutError"), new Error("subjects overlap with an existing stream"), named("NoRespondersError")];
    let calls = 0;
    const made = await createRacing(async () => {
      calls++;
      const failure = failures.shift();
      if (failure) throw failure;
      return "bucket";
    });
    expect(made).toBe("bucket");
    expect(calls).toBe(4);
  });

  it("throws any other failure at once", async () => {
    let calls = 0;
    const refused = new Error("insufficient resources");
    await expect(
      createRacing(async () => {
        calls++;
        throw refused;
      }),
    ).rejects.toBe(refused);
    expect(calls).toBe(1);
  });

  it("gives up after five tries, with the last failure", async () => {
    let calls = 0;
    await expect(
      createRacing(async () => {
        calls++;
        throw named("TimeoutError", `timeout ${calls}`);
      }),
    ).rejects.toThrow("timeout 5");
    expect(calls).toBe(5);
  });
});
