import { createSubjects, InProcessBus } from "@gw/bus";
import type { ClientEvent } from "@gw/contracts";
import { describe, expect, it } from "vitest";
import { agentEventMessage } from "./agent-events.js";
import { InProcessRunEventLog } from "./in-process-run-event-log.js";
import { describeRunEventLogContract } from "./run-event-log.contract.js";

describeRunEventLogContract("in-process", async (retention) => {
  const bus = new InProcessBus();
  const subjects = createSubjects("gw");
  let now = 1_000_000;
  const log = new InProcessRunEventLog({ bus, subjects }, retention, () => now);
  return {
    log,
    bus,
    subjects,
    elapse: async (ms) => {
      now += ms;
    },
    dispose: async () => {
      await log.close();
      await bus.close();
    },
  };
});

describe("InProcessRunEventLog memory", () => {
  const subjects = createSubjects("gw");
  const address = (runId: string) => ({ runId, sessionKey: `k:${runId}`, edgeId: "e1" });
  const send = (bus: InProcessBus, runId: string, seq: number, text: string) => {
    const m = agentEventMessage(subjects, address(runId), { runId, stream: "assistant", data: { type: "text", text } }, seq);
    bus.publish(m.subject, m.data);
  };

  it("keeps events across many slabs, a large one included, and gives each back whole after older ones go", async () => {
    const bus = new InProcessBus();
    let now = 0;
    const log = new InProcessRunEventLog({ bus, subjects }, { maxAgeMs: 1_000, maxBytes: 10_000_000 }, () => now);
    // 40 runs of 60 events, about 1 MB: many 64 KiB slabs. Run r7's 30th event is 20 KB.
    for (let seq = 1; seq <= 60; seq++) {
      for (let r = 0; r < 40; r++) send(bus, `r${r}`, seq, seq === 30 && r === 7 ? "x".repeat(20_000) : `word ${r}/${seq} `.repeat(20));
      if (seq === 30) {
        await bus.flush();
        now += 600;
      }
    }
    const texts = (events: ClientEvent[]) => events.map((e) => (JSON.parse(Buffer.from(e.payloadJson).toString()) as { data: { text: string } }).data.text);
    const r7 = await log.read("r7");
    expect(r7.map((e) => e.seq)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    expect(texts(r7)[29]).toBe("x".repeat(20_000));
    expect(texts(r7)[59]).toBe("word 7/60 ".repeat(20));
    // The first 30 of every run age out; the rest read back intact.
    now += 500;
    send(bus, "late", 1, "late");
    const after = await log.read("r12");
    expect(after.map((e) => e.seq)).toEqual(Array.from({ length: 30 }, (_, i) => i + 31));
    expect(texts(after)).toEqual(Array.from({ length: 30 }, (_, i) => `word 12/${i + 31} `.repeat(20)));
    // A run whose events all went is forgotten, and a new event for it starts it again.
    now += 2_000;
    send(bus, "r3", 61, "again");
    expect((await log.read("r3")).map((e) => e.seq)).toEqual([61]);
    await log.close();
    await bus.close();
  });
});
