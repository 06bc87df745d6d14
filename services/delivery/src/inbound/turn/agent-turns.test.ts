import { createSubjects, InProcessBus } from "@gw/bus";
import type { RunRequest } from "@gw/contracts";
import { createLogger } from "@gw/runtime";
import { InProcessRunQueue, RunRegistry, terminalMessages } from "@gw/runs";
import { createMemoryFastStore } from "@gw/store";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AgentTurns } from "./agent-turns.js";

const logger = createLogger({ service: "test", level: "silent" });
const subjects = createSubjects("t");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let bus: InProcessBus;
let queue: InProcessRunQueue;
let registry: RunRegistry;
/** The fake runner's registry: a runner in another process, on the same store. */
let runnerRegistry: RunRegistry;
let runs: RunRequest[];
/** What the fake runner does with a run: answer after `delayMs`, or die holding it. */
let behaviour: { delayMs: number; die?: boolean };

/** A runner in miniature: claims the run, heartbeats, records the outcome and publishes the terminal event. */
function startRunner() {
  return queue.consume(
    async (request, taken) => {
      runs.push(request);
      const claimed = await runnerRegistry.claim(request.runId, "runner-1", request.nonce);
      taken();
      if (claimed === null) return;
      if (behaviour.die) return; // its heartbeat lapses: the runner died mid-run
      const beat = setInterval(() => {
      runnerRegistry.heartbeat(request.runId, "runner-1").catch(() => undefined);
    }, 50);
      await sleep(behaviour.delayMs);
      clearInterval(beat);
      const final = await runnerRegistry.finish(claimed, { payloads: [{ type: "text", text: `You said: ${request.message}` }] });
      for (const m of terminalMessages(subjects, request, { runId: request.runId, stream: "lifecycle", data: { phase: "end" } }, 1, final)) {
        bus.publish(m.subject, m.data);
      }
    },
    { maxConcurrent: 8 },
  );
}

function turns(starterId = "delivery-a") {
  const t = new AgentTurns({ bus, subjects, queue, registry, logger, starterId, defaultTimeoutSeconds: 60, pollMs: 50 });
  t.start();
  return t;
}

const turn = (runId: string) => ({ runId, sessionKey: "tg:42", agentId: "", message: "hello", sender: "Ada" });

beforeEach(() => {
  bus = new InProcessBus(() => undefined);
  queue = new InProcessRunQueue();
  const store = createMemoryFastStore();
  const options = { retentionMs: 60_000, liveTtlMs: 60_000, heartbeatTtlMs: 200 };
  registry = new RunRegistry(store, options);
  runnerRegistry = new RunRegistry(store, options);
  runs = [];
  behaviour = { delayMs: 20 };
});
afterEach(async () => {
  await queue.close();
  await bus.close();
});

describe("AgentTurns", () => {
  it("runs the agent and answers with the final record from the terminal event", async () => {
    const consumer = startRunner();
    const record = await turns().run(turn("in:tg:default:1"));
    expect(record).toMatchObject({ runId: "in:tg:default:1", state: "done", payloads: [{ type: "text", text: "You said: hello" }] });
    expect(runs.map((r) => ({ sender: r.sender, deliver: r.deliver, edgeId: r.edgeId }))).toEqual([{ sender: "Ada", deliver: false, edgeId: "delivery-a" }]);
    await consumer.stop();
  });

  it("follows a run registered before a crash instead of running it again", async () => {
    const consumer = startRunner();
    behaviour = { delayMs: 300 };
    const first = turns("delivery-dead").run(turn("in:tg:default:2"));
    await sleep(50);
    // The replica that started it is gone; its successor takes the same message up again.
    const again = await turns("delivery-b").run(turn("in:tg:default:2"));
    expect(again).toMatchObject({ state: "done", payloads: [{ text: "You said: hello" }] });
    expect(runs).toHaveLength(1);
    await first;
    // Once over, it answers from the registry at once.
    expect(await turns("delivery-c").run(turn("in:tg:default:2"))).toMatchObject({ state: "done" });
    expect(runs).toHaveLength(1);
    await consumer.stop();
  });

  it("dispatches again a run registered but never dispatched (a crash in between), under its nonce", async () => {
    const now = Date.now();
    await registry.create({ runId: "in:tg:default:3", nonce: "n-1", sessionKey: "tg:42", agentId: "", state: "queued", edgeId: "delivery-dead", createdAt: now, updatedAt: now });
    const consumer = startRunner();
    const record = await turns("delivery-b").run(turn("in:tg:default:3"));
    expect(record.state).toBe("done");
    expect(runs.map((r) => r.nonce)).toEqual(["n-1"]);
    await consumer.stop();
  });

  it("ends a run whose runner died with UNAVAILABLE", async () => {
    behaviour = { delayMs: 0, die: true };
    const consumer = startRunner();
    const record = await turns().run(turn("in:tg:default:4"));
    expect(record).toMatchObject({ state: "error", error: { code: "UNAVAILABLE" } });
    expect((await registry.get("in:tg:default:4"))?.state).toBe("error");
    await consumer.stop();
  });
});
