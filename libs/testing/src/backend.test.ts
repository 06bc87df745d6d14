import { describe, expect, it } from "vitest";
import { chooseBackend } from "./backend.js";
import { startNats, startRedis } from "./index.js";

const nothingInstalled = { findBinary: () => undefined, dockerAvailable: async () => false };

describe("chooseBackend", () => {
  it("prefers a binary on PATH and never asks Docker", async () => {
    let asked = false;
    const backend = await chooseBackend("nats-server", "nats:2.9", {
      findBinary: (name) => `/opt/bin/${name}`,
      dockerAvailable: async () => {
        asked = true;
        return true;
      },
    });
    expect(backend).toEqual({ kind: "binary", path: "/opt/bin/nats-server" });
    expect(asked).toBe(false);
  });

  it("falls back to a container when the binary is missing and Docker is usable", async () => {
    const backend = await chooseBackend("redis-server", "redis:7", {
      findBinary: () => undefined,
      dockerAvailable: async () => true,
    });
    expect(backend).toEqual({ kind: "docker", image: "redis:7" });
  });

  it("says how to install when neither is available", async () => {
    await expect(chooseBackend("nats-server", "nats:2.9", nothingInstalled)).rejects.toThrow(
      /apt-get install nats-server redis-server.*Docker/,
    );
  });

  it("surfaces the same message from startNats and startRedis", async () => {
    await expect(startNats({ probe: nothingInstalled })).rejects.toThrow(
      "cannot start nats-server: it is not on PATH and Docker is not usable",
    );
    await expect(startRedis({ probe: nothingInstalled })).rejects.toThrow(
      /cannot start redis-server.*apt-get install nats-server redis-server/,
    );
  });
});
