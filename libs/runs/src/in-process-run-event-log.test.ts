import { createSubjects, InProcessBus } from "@gw/bus";
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
