import { type FakeModelServer, startFakeModelServer, waitFor } from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RUN_AGENTS, runModels } from "./fixtures/agent-runs.js";
import { type GatewayUnderTest, MODES, startGateway, TOKEN } from "./fixtures/gateway.js";
import { sample, scrape } from "./fixtures/metrics.js";

const RUNS = 96;
const FLOOR = 32;
const CEILING = 256;

/** One streaming chat completion's text, its finish reason and whether it ended with [DONE]. */
async function streamedAnswer(res: Response): Promise<{ text: string; finish: string | null; done: boolean }> {
  const events = (await res.text()).split("\n\n").filter(Boolean);
  const chunks = events
    .filter((e) => e !== "data: [DONE]")
    .map((e) => JSON.parse(e.slice("data: ".length)) as { choices: Array<{ delta: { content?: string }; finish_reason: string | null }> });
  return {
    text: chunks.map((c) => c.choices[0]?.delta.content ?? "").join(""),
    finish: chunks.at(-1)?.choices[0]?.finish_reason ?? null,
    done: events.at(-1) === "data: [DONE]",
  };
}

/**
 * Admission control (docs/decisions.md, Agent runs): a runner whose event loop lags past
 * `runner.admissionLagMs` takes fewer runs at once, down to 32, and the rest wait in the queue.
 * With a budget of 1 ms, 96 streams opened at once make the loop lag, and the limit falls below
 * the ceiling: each stream must still be answered whole, none lost or doubled, and the
 * runner's `gw_runs_admitted` shows the cut, never under the floor of 32.
 */
describe.each(MODES)("admission control under a lagging event loop (%s)", (mode) => {
  let gw: GatewayUnderTest;
  let fake: FakeModelServer;
  let runnerMetricsPort: number;

  beforeAll(async () => {
    fake = await startFakeModelServer();
    gw = await startGateway(mode, { health: true, agents: RUN_AGENTS, models: runModels(fake), runner: { maxConcurrentRuns: CEILING, admissionLagMs: 1 } });
    runnerMetricsPort = gw.ops.find((o) => o.name === (mode === "embedded" ? "gateway" : "agent-runner"))!.metricsPort;
  });
  afterAll(async () => {
    await gw?.stop();
    await fake?.close();
  });

  it("answers every one of 96 simultaneous streams whole while the runner holds runs back", async () => {
    const admitted: number[] = [];
    let loading = true;
    const watching = (async () => {
      while (loading) {
        const value = sample(await scrape(runnerMetricsPort), "gw_runs_admitted");
        if (value !== undefined) admitted.push(value);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const answers = await Promise.all(
      Array.from({ length: RUNS }, async (_, i) => {
        const res = await fetch(`${gw.httpUrl()}/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "oa", messages: [{ role: "user", content: `pause300 admitted ${i}` }], stream: true }),
        });
        expect(res.status).toBe(200);
        return streamedAnswer(res);
      }),
    );
    loading = false;
    await watching;
    answers.forEach((answer, i) => expect(answer).toEqual({ text: `You said: pause300 admitted ${i}`, finish: "stop", done: true }));
    // Each run called the model once: a held-back run was queued, not dropped and not started twice.
    for (let i = 0; i < RUNS; i++) {
      expect(fake.requests.filter((r) => JSON.stringify(r.body).includes(`pause300 admitted ${i}"`))).toHaveLength(1);
    }
    expect(Math.min(...admitted)).toBeLessThan(CEILING);
    expect(Math.min(...admitted)).toBeGreaterThanOrEqual(FLOOR);
  });

  it("keeps the limit at its floor or above, and the runs in hand within it once the load is gone", async () => {
    const text = await waitFor(async () => {
      const scraped = await scrape(runnerMetricsPort);
      return sample(scraped, "gw_runs_active") === 0 ? scraped : undefined;
    });
    expect(sample(text, "gw_runs_admitted")).toBeGreaterThanOrEqual(FLOOR);
    expect(sample(text, "gw_runs_queued")).toBe(0);
  });
});
