import { z } from "zod";
import { SESSION_KEY_PREFIX, sessionKeyProblem } from "./session-key.js";

/**
 * A scheduled run (issue 26 §3): the shape of `cron.jobs[]` in the config file and of the
 * `cron.add` / `cron.update` params. Whether the schedule parses and the agent, channel and
 * timezone exist is the hooks service's to say (it owns the schedules); here is the shape only.
 */

export const CRON_CATCH_UP = ["none", "last", "all"] as const;
export type CronCatchUp = (typeof CRON_CATCH_UP)[number];

export const CronJobIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, "id must be 1-64 letters, digits, '_' or '-', starting with a letter or digit");

const SessionKeySchema = z.string().superRefine((key, ctx) => {
  const problem = sessionKeyProblem(key);
  if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem });
});

const fields = {
  /** 5-field cron (6 with seconds first), "every 15m", or an ISO date-time for one firing. */
  schedule: z.string().trim().min(1, "schedule must not be empty").max(256),
  /** IANA name the cron expression (and an ISO time without offset) is read in; default UTC. */
  timezone: z.string().min(1).max(64).optional(),
  agentId: z.string().min(1).max(128),
  /** Default `cron:<id>`. */
  sessionKey: SessionKeySchema.optional(),
  message: z.string().min(1, "message must not be empty").max(65_536),
  /** Where the run's answer goes; absent: the answer stays in the session. */
  deliver: z
    .object({
      channel: z.string().regex(SESSION_KEY_PREFIX, "channel must be a channel id"),
      to: z.string().trim().min(1, "to must not be empty").max(256),
    })
    .optional(),
  enabled: z.boolean().default(true),
  /** What firings missed while no replica ran become: none, the latest one (default), or all. */
  catchUp: z.enum(CRON_CATCH_UP).default("last"),
};

/** In the config file, where an unknown key is a mistake to report (DESIGN §7). */
export const CronJobSchema = z.strictObject({ id: CronJobIdSchema, ...fields, deliver: fields.deliver.unwrap().strict().optional() });
export type CronJob = z.output<typeof CronJobSchema>;
export type CronJobInput = z.input<typeof CronJobSchema>;

/** As params, unknown keys are dropped like every method's (docs/decisions.md, Wire protocol). */
export const CronListParamsSchema = z.object({});
export const CronAddParamsSchema = z.object({ id: CronJobIdSchema, ...fields });
export type CronAddParams = z.output<typeof CronAddParamsSchema>;

/** The keys given replace the job's; the others stay. */
export const CronUpdateParamsSchema = z.object({
  id: CronJobIdSchema,
  schedule: fields.schedule.optional(),
  timezone: fields.timezone,
  agentId: fields.agentId.optional(),
  sessionKey: fields.sessionKey,
  message: fields.message.optional(),
  /** null takes the destination away. */
  deliver: fields.deliver.nullable(),
  enabled: z.boolean().optional(),
  catchUp: z.enum(CRON_CATCH_UP).optional(),
});
export type CronUpdateParams = z.output<typeof CronUpdateParamsSchema>;

export const CronIdParamsSchema = z.object({ id: CronJobIdSchema });
export type CronIdParams = z.output<typeof CronIdParamsSchema>;

/** A job as `cron.list` shows it: its definition, where it comes from, and its firings. */
export const CronJobViewSchema = z.object({
  id: z.string(),
  schedule: z.string(),
  timezone: z.string().optional(),
  agentId: z.string(),
  sessionKey: z.string().describe("the session its runs write to (default cron:<id>)"),
  message: z.string(),
  deliver: z.object({ channel: z.string(), to: z.string() }).optional(),
  enabled: z.boolean(),
  catchUp: z.enum(CRON_CATCH_UP),
  source: z.enum(["config", "api"]).describe("config jobs are read-only through the API"),
  nextFireAt: z.number().optional().describe("ms since the epoch; absent when disabled or done (a one-shot that fired)"),
  lastFiredAt: z.number().optional().describe("when the last run was started, ms since the epoch"),
  lastScheduledAt: z.number().optional().describe("the scheduled time of the last firing"),
  lastRunId: z.string().optional(),
  lastResult: z.enum(["running", "ok", "error"]).optional(),
  lastError: z.string().optional(),
});
export type CronJobView = z.output<typeof CronJobViewSchema>;

export const CronListResultSchema = z.object({ jobs: z.array(CronJobViewSchema) });
/** cron.add and cron.update: the job as it now stands. */
export const CronJobResultSchema = z.object({ job: CronJobViewSchema });
export const CronRemoveResultSchema = z.object({ removed: z.literal(true), id: z.string() });
export const CronRunResultSchema = z.object({ runId: z.string(), sessionKey: z.string() });
