import { RPC } from "@gw/contracts";
import { waitFor } from "@gw/testing";
import { afterEach, describe, expect, it } from "vitest";
import { firingRun } from "../src/cron/firing-ids.js";
import { RunDispatcher } from "../src/run-dispatch.js";
import { type Harness, startHarness } from "./harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const json = (bytes: Uint8Array) => JSON.parse(Buffer.from(bytes).toString("utf8")) as Record<string, unknown>;

const scheduledOf = (runId: string) => Number(/^cron-tick-(\d+)-/.exec(runId)?.[1]);

describe("a replica that dies in the middle of a firing", () => {
  it("leaves the firing to another, which starts the same run (not a second one) and goes on from there", async () => {
    h = await startHarness();
    const harness = h;
    await harness.cron(RPC.cronAdd, { id: "tick", schedule: "every 1s", agentId: "main", message: "tick", catchUp: "all" });
    const { generation } = json((await (await harness.durable.kv("cron_jobs")).get("tick"))!.value) as { generation: string };
    const states = await harness.durable.kv("cron_state");
    // The job's state exists once a replica's scheduler has seen it.
    await waitFor(() => states.get("tick").then((entry) => entry ?? undefined), { timeoutMs: 5_000 });

    // The replica that "dies": it takes the job's lease (never renewed, so it lapses in 1.5 s),
    // dispatches the next firing's run, and a runner starts it; the cursor is never moved.
    await waitFor(() => harness.fastStore.leases.acquire("cron:fire:{tick}", "dead-replica", 1_500).then((won) => won || undefined), { timeoutMs: 5_000 });
    const cursor = json((await states.get("tick"))!.value).cursor as number;
    const firing = (Math.floor(cursor / 1_000) + 1) * 1_000;
    const ids = firingRun("tick", generation, firing);
    const dispatcher = new RunDispatcher({ bus: harness.bus, subjects: harness.subjects, queue: harness.queue, registry: harness.registry });
    const request = dispatcher.plan({ ...ids, sessionKey: "cron:tick", agentId: "main", message: "tick", sender: "cron:tick", deliver: false });
    await dispatcher.dispatch(request, { endOnFailure: false });
    await harness.registry.claim(ids.runId, "runner-1", ids.nonce);

    // The live replica takes over once the lease lapses, and catches up from that firing on.
    await waitFor(async () => ((json((await states.get("tick"))!.value).cursor as number) >= firing + 2_000 ? true : undefined), { timeoutMs: 10_000 });
    await harness.cron(RPC.cronUpdate, { id: "tick", enabled: false });
    const runIds = harness.runs.map((r) => r.runId).filter((id) => id.startsWith("cron-tick-"));
    expect(runIds.filter((id) => id === ids.runId)).toHaveLength(1);
    expect(new Set(runIds).size).toBe(runIds.length);
    const times = runIds.map(scheduledOf).filter((t) => t >= firing).sort((a, b) => a - b);
    expect(times).toEqual(Array.from({ length: times.length }, (_, i) => firing + i * 1_000));
    expect(times.length).toBeGreaterThanOrEqual(3);
  });
});
