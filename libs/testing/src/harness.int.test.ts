import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { afterAll, describe, expect, it } from "vitest";
import { type NatsServerHandle, type RedisServerHandle, startNats, startRedis } from "./index.js";
import { redisReady, tcpAccepts } from "./readiness.js";

const portRefuses = async (port: number) => {
  try {
    await tcpAccepts(port);
    return false;
  } catch {
    return true;
  }
};

describe("startNats", () => {
  const started: NatsServerHandle[] = [];
  afterAll(async () => {
    await Promise.all(started.map((s) => s.stop()));
  });

  it("keeps JetStream data across kill() and start() on the same port", async () => {
    const nats = await startNats();
    started.push(nats);
    expect(nats.url).toBe(`nats://127.0.0.1:${nats.port}`);
    expect(nats.port).not.toBe(4222);

    const before = await connect({ servers: nats.url });
    const jsm = await jetstreamManager(before);
    await jsm.streams.add({ name: "HARNESS", subjects: ["harness.>"] });
    await jetstream(before).publish("harness.one", "survives a crash");
    await before.close();

    await nats.kill();
    expect(await portRefuses(nats.port)).toBe(true);
    await nats.start();

    const after = await connect({ servers: nats.url });
    try {
      const stored = await (await jetstreamManager(after)).streams.getMessage("HARNESS", { seq: 1 });
      expect(stored?.string()).toBe("survives a crash");
    } finally {
      await after.close();
    }
  });

  it("stop() shuts the server down and removes the temp store dir it created", async () => {
    const nats = await startNats();
    expect(existsSync(nats.storeDir)).toBe(true);
    await nats.stop();
    expect(await portRefuses(nats.port)).toBe(true);
    expect(existsSync(nats.storeDir)).toBe(false);
    await nats.stop();
  });

  it("leaves a caller-provided store dir in place", async () => {
    const dir = await mkdtemp(join(tmpdir(), "gw-harness-test-"));
    try {
      const nats = await startNats({ storeDir: dir });
      expect(nats.storeDir).toBe(dir);
      await nats.stop();
      expect(existsSync(join(dir, "jetstream"))).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("runs without JetStream when asked", async () => {
    const nats = await startNats({ jetstream: false });
    started.push(nats);
    const nc = await connect({ servers: nats.url });
    try {
      expect(nc.info?.jetstream ?? false).toBe(false);
    } finally {
      await nc.close();
    }
  });
});

describe("startRedis", () => {
  let redis: RedisServerHandle | undefined;
  afterAll(async () => {
    await redis?.stop();
  });

  it("starts on a free port, survives kill() + start(), and stop() frees the port", async () => {
    redis = await startRedis();
    expect(redis.url).toBe(`redis://127.0.0.1:${redis.port}`);
    expect(redis.port).not.toBe(6379);
    expect(await redisReady(redis.port)).toBe(true);

    await redis.kill();
    expect(await portRefuses(redis.port)).toBe(true);
    await redis.start();
    expect(await redisReady(redis.port)).toBe(true);

    await redis.stop();
    expect(await portRefuses(redis.port)).toBe(true);
    await redis.start();
    expect(await redisReady(redis.port)).toBe(true);
  });
});
