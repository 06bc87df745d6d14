import { RPC } from "@gw/contracts";
import { waitFor } from "@gw/testing";
import { afterEach, describe, expect, it } from "vitest";
import { type Harness, startHarness } from "./harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const scheduledOf = (runId: string) => Number(/^cron-idle-(\d+)-/.exec(runId)?.[1]);

describe("a disabled job", () => {
  it("fires nothing, and enabled again does not catch up the firings it passed while disabled", async () => {
    h = await startHarness();
    const harness = h;
    await harness.cron(RPC.cronAdd, { id: "idle", schedule: "every 1s", agentId: "main", message: "idle", catchUp: "all", enabled: false });
    // Three firings pass while it is disabled (each replica's pass moves the cursor over them).
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(harness.runs.filter((r) => r.runId.startsWith("cron-idle-"))).toEqual([]);
    const enabledAt = Date.now();
    await harness.cron(RPC.cronUpdate, { id: "idle", enabled: true });
    const first = await waitFor(() => harness.runs.find((r) => r.runId.startsWith("cron-idle-")), { timeoutMs: 5_000 });
    // Nothing from before the job was enabled again, beyond the one firing a pass may have been about to skip.
    expect(scheduledOf(first.runId)).toBeGreaterThan(enabledAt - 1_000);
    await harness.cron(RPC.cronRemove, { id: "idle" });
  });
});
