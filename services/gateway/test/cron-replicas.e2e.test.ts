import { type FakeModelServer, startFakeModelServer, waitFor, waitUntil } from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { send } from "./fixtures/agent-runs.js";
import { AGENTS, type GatewayUnderTest, startGateway, TOKEN } from "./fixtures/gateway.js";
import { WsClient } from "./fixtures/ws-client.js";

const PERIOD_MS = 1_000;
const WINDOW_FIRINGS = 10;

async function call(client: WsClient, method: string, params: Record<string, unknown>) {
  const frame = await send(client, method, params);
  expect(frame.error).toBeUndefined();
  return frame.payload as Record<string, unknown>;
}

/** The scheduled times the session's user messages came from (senders read `cron:<id>@<ISO time>`). */
async function firedTimes(client: WsClient, key: string): Promise<number[]> {
  const preview = await send(client, "sessions.preview", { key, limit: 200 });
  if (!preview.ok) return [];
  const messages = preview.payload!.messages as Array<{ role: string; sender: string }>;
  return messages.filter((m) => m.role === "user").map((m) => Date.parse(m.sender.slice(m.sender.indexOf("@") + 1)));
}

describe("scheduled runs with three hooks replicas over real NATS and Redis", () => {
  let gw: GatewayUnderTest;
  let fake: FakeModelServer;
  let client: WsClient;
  beforeAll(async () => {
    fake = await startFakeModelServer();
    gw = await startGateway("distributed", {
      hooksReplicas: 3,
      agents: [...AGENTS, { id: "held", name: "Held", model: "fake/model-held" }],
      models: { providers: { fake: { kind: "openai", baseUrl: fake.baseUrl, apiKey: "sk-fake", timeoutMs: 20_000 } } },
    });
    client = await WsClient.open(gw.wsUrl());
    expect((await client.connect(TOKEN)).ok).toBe(true);
  });
  afterAll(async () => {
    client?.close();
    await gw?.stop();
    await fake?.close();
  });

  it("fires a job every second exactly once per firing, a replica killed in the middle", async () => {
    await call(client, "cron.add", { id: "pulse", schedule: "every 1s", agentId: "main", message: "pulse", catchUp: "all" });
    // A fixed window of ten firings, starting two periods after the job exists.
    const from = (Math.floor(Date.now() / PERIOD_MS) + 2) * PERIOD_MS;
    const to = from + WINDOW_FIRINGS * PERIOD_MS;
    await new Promise((resolve) => setTimeout(resolve, from + 4 * PERIOD_MS - Date.now()));
    await gw.hooks![0]!.kill("SIGKILL");
    // The dead replica's firing lease lapses (5 s); catchUp "all" then starts what it left, late but once.
    const times = await waitFor(
      async () => {
        const fired = await firedTimes(client, "cron:pulse");
        return fired.some((t) => t >= to) ? fired : undefined;
      },
      { timeoutMs: 30_000 },
    );
    await call(client, "cron.update", { id: "pulse", enabled: false });
    const inWindow = times.filter((t) => t >= from && t < to).sort((a, b) => a - b);
    expect(inWindow).toEqual(Array.from({ length: WINDOW_FIRINGS }, (_, i) => from + i * PERIOD_MS));
    // Over the job's whole life: no scheduled time twice.
    const all = await firedTimes(client, "cron:pulse");
    expect(new Set(all).size).toBe(all.length);
  });

  it("a replica killed while its firing's run is under way: the run happens once and its result is recorded", async ({ onTestFailed }) => {
    // What the scheduler and the runner said of the job, to tell a stuck pass from a slow run.
    onTestFailed(() => {
      for (const proc of [...gw.hooks!, ...(gw.runners ?? [])]) {
        const lines = proc.fullOutput().split("\n").filter((line) => line.includes("held") || line.includes('"level":40') || line.includes('"level":50'));
        console.error(`--- ${proc.name}\n${lines.slice(-40).join("\n")}`);
      }
    });
    const release = fake.hold();
    const at = new Date(Math.ceil((Date.now() + 2_000) / PERIOD_MS) * PERIOD_MS).toISOString();
    await call(client, "cron.add", { id: "held", schedule: at, agentId: "held", message: "held job" });
    await waitUntil(() => fake.requests.some((r) => JSON.stringify(r.body).includes("held job")), { timeoutMs: 15_000 });
    // The replica that fired logs it once dispatch has answered, which may come after the runner's model call.
    const alive = gw.hooks!.filter((p) => p.child.exitCode === null && p.child.signalCode === null);
    const firer = await waitFor(() => alive.find((p) => /"job":"held".*cron job fired/.test(p.fullOutput())), { timeoutMs: 10_000 });
    await firer.kill("SIGKILL");
    release();
    // A survivor records the outcome on its next pass after the run ends; a loaded CI machine
    // slows the run's end (transcript, registry) more than the pass, so the wait is generous.
    const job = await waitFor(
      async () => ((await call(client, "cron.list", {})).jobs as Array<Record<string, unknown>>).find((j) => j.id === "held" && j.lastResult !== "running"),
      { timeoutMs: 60_000, what: "the held job's outcome in cron.list" },
    );
    expect(job).toMatchObject({ lastResult: "ok", lastScheduledAt: Date.parse(at) });
    expect(job.nextFireAt).toBeUndefined();
    expect(await firedTimes(client, "cron:held")).toEqual([Date.parse(at)]);
    expect(fake.requests.filter((r) => JSON.stringify(r.body).includes("held job"))).toHaveLength(1);
  });
});
