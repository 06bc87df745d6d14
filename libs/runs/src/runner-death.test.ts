import type { RunRecord } from "@gw/contracts";
import { RunRegistry } from "./run-registry.js";
import { createMemoryFastStore } from "@gw/store";
import { describe, expect, it } from "vitest";
import { inspectRun } from "./runner-death.js";

const queued = (runId: string): RunRecord => ({
  runId,
  sessionKey: "s:1",
  agentId: "main",
  state: "queued",
  edgeId: "e",
  createdAt: 1,
  updatedAt: 1,
});

describe("inspectRun (the runner-death detector)", () => {
  it("tells gone, queued, running with a heartbeat, and final runs apart", async () => {
    const registry = new RunRegistry(createMemoryFastStore());
    expect(await inspectRun(registry, "none")).toEqual({ kind: "gone" });
    await registry.create(queued("q"));
    expect(await inspectRun(registry, "q")).toEqual({ kind: "live" });
    const claimed = await registry.claim("q", "runner-1");
    expect(await inspectRun(registry, "q")).toEqual({ kind: "live" });
    const final = await registry.finish(claimed!, { payloads: [{ type: "text", text: "ok" }] });
    expect(await inspectRun(registry, "q")).toEqual({ kind: "final", record: final });
  });

  it("calls a running run whose heartbeat lapsed dead", async () => {
    let now = 1_000_000;
    const store = createMemoryFastStore({ now: () => now });
    // The runner's registry and the waiter's: separate processes on one store.
    const [runner, registry] = [new RunRegistry(store), new RunRegistry(store)];
    await registry.create(queued("d"));
    const claimed = await runner.claim("d", "runner-1");
    now += registry.opts.heartbeatTtlMs + 1;
    expect(await inspectRun(registry, "d")).toEqual({ kind: "dead", record: claimed });
  });

  it("never calls a run of a runner in its own process dead, whatever its heartbeat", async () => {
    let now = 1_000_000;
    const registry = new RunRegistry(createMemoryFastStore({ now: () => now }));
    await registry.create(queued("e"));
    await registry.claim("e", "runner-1");
    now += registry.opts.heartbeatTtlMs * 10;
    expect(await registry.heartbeatAlive("e")).toBe(false);
    expect(await inspectRun(registry, "e")).toEqual({ kind: "live" });
  });

  it("reads the record again before calling the runner dead: the outcome may have just landed", async () => {
    const store = createMemoryFastStore();
    const [runner, registry] = [new RunRegistry(store), new RunRegistry(store)];
    await registry.create(queued("f"));
    const claimed = (await runner.claim("f", "runner-1"))!;
    // The runner records its outcome (clearing the heartbeat) between the detector's two reads.
    let final: RunRecord | undefined;
    const racing = Object.assign(Object.create(registry) as RunRegistry, {
      heartbeatAlive: async () => {
        final = await registry.finish(claimed, { payloads: [] });
        return false;
      },
    });
    expect(await inspectRun(racing, "f")).toEqual({ kind: "final", record: final });
  });
});
