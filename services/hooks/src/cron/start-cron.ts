import type { Bus, Subjects } from "@gw/bus";
import type { GatewayConfig } from "@gw/config";
import type { Logger } from "@gw/runtime";
import type { RunRegistry } from "@gw/runs";
import type { DurableStore, FastStore } from "@gw/store";
import type { HookActions } from "../actions.js";
import type { RunDispatcher } from "../run-dispatch.js";
import { serveCron } from "./cron-service.js";
import { CronJobBook } from "./job-book.js";
import { JobStates } from "./job-state.js";
import { CronScheduler } from "./scheduler.js";

export interface CronDeps {
  config: GatewayConfig;
  bus: Bus;
  subjects: Subjects;
  fastStore: FastStore;
  durable: DurableStore;
  registry: RunRegistry;
  dispatcher: RunDispatcher;
  actions: HookActions;
  logger: Logger;
}

/** Scheduled runs (cron.jobs and cron.*): the jobs and their states in the durable store, the scheduler, the methods. */
export async function startCron(deps: CronDeps): Promise<{ stop(): Promise<void> }> {
  const [jobsKv, stateKv] = await Promise.all([deps.durable.kv("cron_jobs"), deps.durable.kv("cron_state")]);
  const book = new CronJobBook(deps.config.cron.jobs, jobsKv);
  const states = new JobStates(stateKv);
  const scheduler = new CronScheduler({
    book,
    states,
    dispatcher: deps.dispatcher,
    registry: deps.registry,
    bus: deps.bus,
    subjects: deps.subjects,
    store: deps.fastStore,
    logger: deps.logger,
  });
  const served = serveCron({
    bus: deps.bus,
    subjects: deps.subjects,
    book,
    states,
    scheduler,
    agentIds: new Set(deps.config.agents.list.map((agent) => agent.id)),
    checkDestination: (job) =>
      deps.actions.checkDestination(
        deps.dispatcher.plan({ sessionKey: job.sessionKey ?? `cron:${job.id}`, message: job.message, sender: "cron", deliver: true, ...job.deliver }),
      ),
  });
  scheduler.start();
  return {
    stop: async () => {
      for (const unsubscribe of served) unsubscribe();
      await scheduler.stop();
    },
  };
}
