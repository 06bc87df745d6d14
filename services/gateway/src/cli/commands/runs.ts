import { type GatewayClient, payloadText } from "@gw/client";
import type { Command } from "commander";
import { action, type CliIo, type CommandContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { relativeTime, table } from "../format.js";
import { examples } from "../help.js";
import { RunPrinter } from "../run-printer.js";
import { count, positiveNumber } from "./values.js";

async function listRuns(ctx: CommandContext): Promise<void> {
  const o = ctx.opts as { session?: string; agent?: string; limit?: number };
  const params = { ...(o.session ? { sessionKey: o.session } : {}), ...(o.agent ? { agentId: o.agent } : {}), ...(o.limit ? { limit: o.limit } : {}) };
  const answer = await (await ctx.control()).request("runs.list", params);
  ctx.out.result(answer, () =>
    table(
      ["RUN", "SESSION", "AGENT", "STATUS", "STARTED", "EDGE", "RUNNER"],
      answer.runs.map((r) => [r.runId, r.sessionKey, r.agentId, r.status === "stalled" ? ctx.out.paint("yellow", r.status) : r.status, relativeTime(r.startedAt), r.edgeId, r.runner ?? "-"]),
      "no runs in flight",
    ),
  );
}

/** How long `runs follow` keeps reconnecting (1 s apart) after its connection drops: an edge restart. */
const RESUME_FOR_MS = 60_000;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * One subscription on one connection: resolves "ended" with the run's end, "closed" when the
 * connection drops first (the caller resumes after printer.lastSeq on a new one).
 */
async function followOnce(client: GatewayClient, printer: RunPrinter): Promise<"ended" | "closed"> {
  let stopEvents = () => {};
  let stopClose = () => {};
  const settled = new Promise<"ended" | "closed">((resolve) => {
    stopEvents = client.onEvent((event, payload) => {
      if (printer.take(event, payload)) resolve("ended");
    });
    stopClose = client.onClose(() => resolve("closed"));
  });
  try {
    const answer = await client.request("agent.subscribe", { runId: printer.runId, afterSeq: printer.lastSeq });
    if (!answer.subscribed && printer.end === undefined) {
      // Over, and its end was before afterSeq: the outcome from agent.wait.
      const waited = await client.request("agent.wait", { runId: printer.runId, timeoutSeconds: 1 });
      printer.end = waited.status === "error" ? { phase: "error", ...(waited.error ? { code: waited.error.code, error: waited.error.message } : {}) } : { phase: "end" };
      return "ended";
    }
    return await settled;
  } catch (err) {
    if (!client.isOpen) return "closed";
    throw err;
  } finally {
    stopEvents();
    stopClose();
  }
}

async function followRun(ctx: CommandContext, runId: string): Promise<void> {
  const printer = new RunPrinter(ctx.out, runId);
  printer.lastSeq = (ctx.opts.afterSeq as number | undefined) ?? 0;
  let client = await ctx.control();
  let lostAt: number | undefined;
  while ((await followOnce(client, printer)) === "closed") {
    lostAt ??= Date.now();
    if (Date.now() - lostAt > RESUME_FOR_MS) throw new CliError(EXIT.unreachable, "UNREACHABLE", `lost the gateway while following run ${runId} (last seq ${printer.lastSeq})`);
    ctx.out.note(`connection lost; resuming run ${runId} after seq ${printer.lastSeq}`);
    await sleep(1_000);
    const fresh = await ctx.reconnect().catch(() => undefined);
    if (fresh !== undefined) {
      client = fresh;
      lostAt = undefined;
    }
  }
  const end = printer.end!;
  ctx.out.result({ runId, lastSeq: printer.lastSeq, status: end.phase === "end" ? "ok" : "error", end, text: printer.text, tools: printer.tools }, () => "");
  if (end.phase === "error") {
    ctx.out.note(`run ${runId} ended with ${end.code ?? "an error"}: ${end.error ?? ""}`);
    ctx.io.outcome.exitCode = EXIT.refused;
  }
}

async function waitRun(ctx: CommandContext, runId: string): Promise<void> {
  const timeoutSeconds = (ctx.opts.timeout as number | undefined) ?? 300;
  const client = await ctx.control();
  const answer = await client.request(
    "agent.wait",
    { runId, timeoutSeconds },
    { timeoutMs: (timeoutSeconds + 30) * 1_000 },
  );
  ctx.out.result(answer, () => (answer.status === "ok" ? payloadText(answer.result.payloads) : ""));
  if (!answer.completed) {
    ctx.out.note(`run ${runId} is still running after ${timeoutSeconds} s`);
    ctx.io.outcome.exitCode = EXIT.refused;
  } else if (answer.status === "error") {
    ctx.out.note(`run ${runId} ended with ${answer.error?.code ?? "an error"}: ${answer.error?.message ?? ""}`);
    ctx.io.outcome.exitCode = EXIT.refused;
  }
}

async function abortRun(ctx: CommandContext, runId: string): Promise<void> {
  const answer = await (await ctx.control()).request("chat.abort", { runId });
  ctx.out.result(answer, () => (answer.aborted ? `aborted run ${runId}` : `run ${runId} was not running (nothing to abort)`));
}

export function registerRunCommands(program: Command, io: CliIo): void {
  const runs = examples(program.command("runs").description("the runs in flight: list, follow, wait for, abort"), "gateway runs list", "gateway runs follow <runId>");
  examples(
    runs
      .command("list")
      .description("the runs not yet ended, on every edge and runner")
      .option("-s, --session <key>", "only this session's runs")
      .option("-a, --agent <id>", "only this agent's runs")
      .option("--limit <n>", "at most this many (1-1000, default 100)", count)
      .action(action(io, listRuns)),
    "gateway runs list",
    "gateway runs list --agent main --json",
  );
  examples(
    runs
      .command("follow")
      .description("stream a run's events from any edge (resumed through agent.subscribe), until it ends; a dropped connection is resumed")
      .argument("<runId>", "the run")
      .option("--after-seq <n>", "start after this event number (default 0: from the start)", count)
      .action(action(io, followRun)),
    "gateway runs follow 3f1c9a2e-…",
    "gateway runs follow 3f1c9a2e-… --after-seq 12",
  );
  examples(
    runs
      .command("wait")
      .description("wait for a run to end and print its answer (exit 1 when it failed or is still running at the timeout)")
      .argument("<runId>", "the run")
      .option("--timeout <seconds>", "give up after this long (default 300)", positiveNumber)
      .action(action(io, waitRun)),
    "gateway runs wait 3f1c9a2e-…",
  );
  examples(runs.command("abort").description("stop a run").argument("<runId>", "the run").action(action(io, abortRun)), "gateway runs abort 3f1c9a2e-…");
}
