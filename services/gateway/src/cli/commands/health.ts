import type { GatewayStatusResult as GatewayStatus } from "@gw/contracts";
import type { Command } from "commander";
import { action, type CliIo, type CommandContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { relativeTime, table } from "../format.js";
import { examples } from "../help.js";

async function health(ctx: CommandContext): Promise<void> {
  const { httpUrl } = ctx.target();
  let res: Response;
  try {
    res = await fetch(`${httpUrl}/health`, { signal: AbortSignal.timeout(10_000) });
  } catch (err) {
    const why = (err as Error & { cause?: Error }).cause?.message ?? (err as Error).message;
    throw new CliError(EXIT.unreachable, "UNREACHABLE", `cannot reach the gateway at ${httpUrl}: ${why}`);
  }
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  const healthy = res.status === 200;
  ctx.out.result({ ...body, url: httpUrl, httpStatus: res.status, ok: healthy }, () =>
    healthy ? `${ctx.out.paint("green", "ok")}  ${httpUrl}` : `${ctx.out.paint("red", "not ready")}  ${httpUrl} answered ${res.status} ${JSON.stringify(body)}`,
  );
  if (!healthy) ctx.io.outcome.exitCode = EXIT.refused;
}

function statusText(ctx: CommandContext, url: string, s: GatewayStatus): string {
  const yes = (ok: boolean, word = ok ? "yes" : "no") => ctx.out.paint(ok ? "green" : "red", word);
  const edges = table(
    ["EDGE", "VERSION", "STARTED", "SEEN", "CONNECTIONS", "STATE"],
    s.edges.map((e) => [e.edgeId, e.version, relativeTime(e.startedAt), relativeTime(e.seenAt), String(e.connections), e.draining ? ctx.out.paint("yellow", "draining") : "serving"]),
  );
  const services = table(
    ["SERVICE", "READY", "ERROR"],
    s.services.map((svc) => [svc.service, yes(svc.ready), svc.error ?? ""]),
  );
  const channels =
    s.channels === null
      ? "Channels: unknown (delivery did not answer)"
      : [
          `Channels: ${s.channels.channels} channel(s), ${s.channels.accounts} account(s), ${s.channels.reachable} reachable, ${s.channels.withErrors} with errors`,
          table(["CHANNEL", "KIND", "ACCOUNTS", "REACHABLE"], s.channels.byChannel.map((c) => [c.id, c.kind, String(c.accounts), `${c.reachable}/${c.accounts}`])),
        ].join("\n");
  return [
    `${ctx.out.paint("bold", `gateway ${s.version}`)} at ${url} (answered by edge ${s.edgeId})`,
    "",
    `Edges seen: ${s.edges.length}`,
    edges,
    "",
    "Services",
    services,
    `hooks: ${s.hooks.enabled ? "enabled" : "disabled"}`,
    "",
    channels,
    "",
    `Runs in flight: ${s.runs.atLeast ? "at least " : ""}${s.runs.inFlight} (${s.runs.queued} queued, ${s.runs.running} running` +
      `${s.runs.stalled > 0 ? `, ${ctx.out.paint("yellow", `${s.runs.stalled} stalled`)}` : ""})`,
  ].join("\n");
}

async function status(ctx: CommandContext): Promise<void> {
  const client = await ctx.control();
  const answer = await client.request("gateway.status");
  ctx.out.result(answer, () => statusText(ctx, ctx.target().url, answer));
}

export function registerHealthCommands(program: Command, io: CliIo): void {
  examples(
    program.command("health").description("ask GET /health whether the gateway is up and its dependencies connected (no credential needed)").action(action(io, health)),
    "gateway health",
    "gateway health --url http://gateway.internal:18789 --json",
  );
  examples(
    program.command("status").description("the edges seen, the services answering, the channels and the runs in flight").action(action(io, status)),
    "gateway status",
    "gateway status --json",
  );
}
