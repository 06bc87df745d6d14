import { type Bus, type RpcDefinition, serveRpc, type Subjects, type Unsubscribe } from "@gw/bus";
import { parseSchedule } from "@gw/config";
import {
  CronAddParamsSchema,
  type CronAnswer,
  type CronCall,
  CronIdParamsSchema,
  type CronJob,
  type CronJobView,
  CronUpdateParamsSchema,
  describeIssues,
  encodeJson,
  GatewayError,
  RPC,
} from "@gw/contracts";
import type { z } from "zod";
import { nextFireAt } from "./due-firing.js";
import type { BookedJob, CronJobBook } from "./job-book.js";
import type { JobState, JobStates } from "./job-state.js";
import { type CronScheduler, definitionOf, scheduleOf, sessionKeyOf } from "./scheduler.js";

export interface CronServiceDeps {
  bus: Bus;
  subjects: Subjects;
  book: CronJobBook;
  states: JobStates;
  scheduler: CronScheduler;
  agentIds: ReadonlySet<string>;
  /** Refuses a destination delivery would refuse (unknown channel, bad recipient). */
  checkDestination(job: CronJob): Promise<void>;
}

/** The params the edge validated, read again here with the same schema (the bus is a boundary too). */
function paramsOf<S extends z.ZodType>(schema: S, call: CronCall): z.output<S> {
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(call.paramsJson).toString("utf8"));
  } catch {
    throw new GatewayError("INVALID_REQUEST", "params are not JSON");
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new GatewayError("INVALID_REQUEST", describeIssues(parsed.error, "params"));
  return parsed.data;
}

const answer = (result: Record<string, unknown>): CronAnswer => ({ resultJson: encodeJson(result) });

/** A job with its firings as `cron.list` shows it; the same on every replica (all of it is stored). */
export function jobView(booked: BookedJob, state: JobState | null): CronJobView {
  const fresh = state !== null && state.definition === definitionOf(booked) ? state : null;
  const next = booked.job.enabled ? nextFireAt(scheduleOf(booked), fresh === null ? Date.now() : fresh.cursor) : null;
  return {
    ...booked.job,
    sessionKey: sessionKeyOf(booked),
    source: booked.source,
    ...(next === null ? {} : { nextFireAt: next }),
    ...(state === null ? {} : pick(state)),
  };
}

function pick(state: JobState) {
  const { lastFiredAt, lastScheduledAt, lastRunId, lastResult, lastError } = state;
  return Object.fromEntries(Object.entries({ lastFiredAt, lastScheduledAt, lastRunId, lastResult, lastError }).filter(([, v]) => v !== undefined));
}

/**
 * `cron.list|add|update|remove|run` on `<prefix>.rpc.hooks.cron.*` (queue group `hooks`): any
 * replica answers, from the durable store. A new or changed job is checked as the config's are
 * (schedule, timezone, agent) and, with `deliver`, its destination is asked of delivery.
 */
export function serveCron(deps: CronServiceDeps): Unsubscribe[] {
  const check = async (job: CronJob) => {
    try {
      parseSchedule(job.schedule, job.timezone);
    } catch (err) {
      const key = (err as Error).message.startsWith("unknown timezone") ? "timezone" : "schedule";
      throw new GatewayError("INVALID_REQUEST", `${key}: ${(err as Error).message}`);
    }
    if (!deps.agentIds.has(job.agentId)) throw new GatewayError("INVALID_REQUEST", `agentId: unknown agent "${job.agentId}"`);
    if (job.deliver !== undefined) await deps.checkDestination(job);
  };
  const view = async (booked: BookedJob) => jobView(booked, await deps.states.read(booked.job.id));
  const serve = (def: RpcDefinition<CronCall, CronAnswer>, handler: (call: CronCall) => Promise<Record<string, unknown>>) =>
    serveRpc(deps.bus, deps.subjects, def, async (call) => answer(await handler(call)));
  return [
    serve(RPC.cronList, async () => ({ jobs: await Promise.all((await deps.book.all()).map(view)) })),
    serve(RPC.cronAdd, async (call) => {
      const job = paramsOf(CronAddParamsSchema, call);
      await check(job);
      return { job: await view(await deps.book.add(job)) };
    }),
    serve(RPC.cronUpdate, async (call) => {
      const { id, deliver, ...changes } = paramsOf(CronUpdateParamsSchema, call);
      const given = Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined));
      const booked = await deps.book.update(
        id,
        (job) => {
          const { deliver: before, ...rest } = job;
          const target = deliver === undefined ? before : (deliver ?? undefined);
          return { ...rest, ...given, ...(target === undefined ? {} : { deliver: target }) };
        },
        check,
      );
      return { job: await view(booked) };
    }),
    serve(RPC.cronRemove, async (call) => {
      const { id } = paramsOf(CronIdParamsSchema, call);
      await deps.book.remove(id);
      await deps.states.remove(id);
      return { removed: true, id };
    }),
    serve(RPC.cronRun, async (call) => {
      const { id } = paramsOf(CronIdParamsSchema, call);
      const booked = await deps.book.get(id);
      const runId = await deps.scheduler.runNow(booked);
      return { runId, sessionKey: sessionKeyOf(booked) };
    }),
  ];
}
