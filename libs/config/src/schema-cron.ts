import { CronJobSchema } from "@gw/contracts";
import { z } from "zod";
import { parseSchedule } from "./schedule.js";

/** One job: the wire shape (libs/contracts), with its schedule and timezone checked here. */
const configCronJobSchema = () => CronJobSchema.superRefine((job, ctx) => {
  try {
    parseSchedule(job.schedule, job.timezone);
  } catch (err) {
    const path = (err as Error).message.startsWith("unknown timezone") ? "timezone" : "schedule";
    ctx.addIssue({ code: "custom", path: [path], message: (err as Error).message });
  }
});

/**
 * `cron`: scheduled agent runs. Jobs listed here are read-only through the API (`cron.update`
 * and `cron.remove` refuse them); jobs added with `cron.add` live in the durable store.
 */
export const cronSectionSchema = () => z
  .strictObject({
    jobs: z.array(configCronJobSchema()).default([]),
  })
  .superRefine((section, ctx) => {
    const seen = new Set<string>();
    section.jobs.forEach((job, i) => {
      if (seen.has(job.id)) ctx.addIssue({ code: "custom", path: ["jobs", i, "id"], message: `"${job.id}" is used by an earlier job` });
      seen.add(job.id);
    });
  })
  .prefault({});

export type CronConfig = z.output<ReturnType<typeof cronSectionSchema>>;
