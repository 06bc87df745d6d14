import type { CronJobView } from "@gw/contracts";
import type { Command } from "commander";
import { action, type CliIo, type CommandContext } from "../context.js";
import { relativeTime, table, truncate } from "../format.js";
import { examples } from "../help.js";

const lastRun = (job: CronJobView) =>
  job.lastResult === undefined ? "-" : `${job.lastResult} ${relativeTime(job.lastFiredAt)}${job.lastError ? `: ${truncate(job.lastError, 40)}` : ""}`;

async function cronList(ctx: CommandContext): Promise<void> {
  const answer = await (await ctx.control()).request("cron.list");
  ctx.out.result(answer, () =>
    table(
      ["ID", "SCHEDULE", "AGENT", "SESSION", "SOURCE", "NEXT", "LAST RUN"],
      answer.jobs.map((j) => [
        j.enabled ? j.id : ctx.out.paint("dim", `${j.id} (disabled)`),
        j.timezone ? `${j.schedule} (${j.timezone})` : j.schedule,
        j.agentId,
        j.sessionKey,
        j.source,
        j.nextFireAt === undefined ? "-" : `${new Date(j.nextFireAt).toISOString()} (${relativeTime(j.nextFireAt)})`,
        lastRun(j),
      ]),
      "no cron jobs (cron.jobs in the config, or gateway cron add)",
    ),
  );
}

async function cronAdd(ctx: CommandContext, id: string, schedule: string): Promise<void> {
  const { opts } = ctx;
  const deliver = opts.channel !== undefined || opts.to !== undefined ? { deliver: { channel: opts.channel, to: opts.to } } : {};
  const params = {
    id,
    schedule,
    agentId: opts.agent,
    message: opts.message,
    ...(opts.timezone ? { timezone: opts.timezone } : {}),
    ...(opts.session ? { sessionKey: opts.session } : {}),
    ...(opts.catchUp ? { catchUp: opts.catchUp } : {}),
    ...(opts.disabled ? { enabled: false } : {}),
    ...deliver,
  };
  const answer = await (await ctx.control()).request("cron.add", params);
  const next = answer.job.nextFireAt;
  ctx.out.result(answer, () => `added ${id}; next firing ${next === undefined ? "none" : new Date(next).toISOString()}`);
}

async function cronRemove(ctx: CommandContext, id: string): Promise<void> {
  const answer = await (await ctx.control()).request("cron.remove", { id });
  ctx.out.result(answer, () => `removed ${id}`);
}

async function cronRun(ctx: CommandContext, id: string): Promise<void> {
  const answer = await (await ctx.control()).request("cron.run", { id });
  ctx.out.result(answer, () => `started run ${answer.runId} on ${answer.sessionKey}`);
}

export function registerCronCommands(program: Command, io: CliIo): void {
  const cron = examples(program.command("cron").description("scheduled agent runs"), "gateway cron list", "gateway cron run morning-summary");
  examples(
    cron.command("list").description("every job with its next firing and its last run's result").action(action(io, cronList)),
    "gateway cron list",
    "gateway cron list --json",
  );
  examples(
    cron
      .command("add")
      .description("add a job, kept by the gateway across restarts")
      .argument("<id>", "the job's id: letters, digits, '_' and '-'")
      .argument("<schedule>", 'a cron expression ("0 8 * * mon-fri", 6 fields with seconds), "every 15m", or an ISO time for one firing')
      .requiredOption("--agent <id>", "the agent that runs")
      .requiredOption("--message <text>", "what the agent is told at each firing")
      .option("--timezone <name>", "IANA timezone the schedule is read in (default UTC)")
      .option("--session <key>", "the session the runs write to (default cron:<id>)")
      .option("--channel <id>", "deliver the answer on this channel (with --to)")
      .option("--to <recipient>", "deliver the answer to this recipient")
      .option("--catch-up <mode>", "firings missed while no replica ran: none, last (default) or all")
      .option("--disabled", "add it switched off")
      .action(action(io, cronAdd)),
    'gateway cron add morning-summary "0 8 * * mon-fri" --timezone Europe/Berlin --agent main --message "Summarise the night" --channel telegram --to @ops',
    'gateway cron add ping "every 15m" --agent main --message "ping"',
  );
  examples(cron.command("remove").description("remove a job added at run time").argument("<id>").action(action(io, cronRemove)), "gateway cron remove ping");
  examples(cron.command("run").description("start a job's run now, outside its schedule").argument("<id>").action(action(io, cronRun)), "gateway cron run morning-summary");
}
